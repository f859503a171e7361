// What the proxy's handlers share (the route table and both surfaces' handlers), in a module of its own so the
// handlers need not import the route table that imports them.
import type { BodyBudget } from '../http/body-budget.ts'
import type { BodyReadLimits } from '../http/read-body.ts'
import type { HandlerRequest } from '../http/contract.ts'
import type { Backend, ProxyObserver } from './upstream/backend.ts'
import type { Logger } from '../logger.ts'
import type { FetchedImage, ImageAllowance } from './images/fetch.ts'
import type { ModelCatalog } from './models/catalog.ts'
import type { SafetySetting } from './safety-settings.ts'
import type { ProxyCaller } from './access/caller.ts'
import type { ModelPolicy } from './access/model-policy.ts'
import type { Metering } from './access/metering.ts'
import type { Ownership } from './access/ownership.ts'
import type { ToolPolicy } from './access/tool-policy.ts'

/** What the handlers share; built once by createProxy. */
export interface ProxyContext {
  /** Who the request runs as; throws 503/429/401 (access/client-auth.ts). Cheap on a request that passed once. */
  checkAuth: (req: HandlerRequest) => Promise<ProxyCaller>
  /** Which models a caller may use (access/model-policy.ts). */
  modelPolicy: ModelPolicy
  /** Limits, usage and call reports of every model call (access/metering.ts). */
  metering: Metering
  /** Who owns each upstream resource, and what keys may touch (access/ownership.ts). */
  ownership: Ownership
  /** Which built-in tools (googleSearch, urlContext, ...) a key's level may send (access/tool-policy.ts). */
  tools: ToolPolicy
  catalog: ModelCatalog
  /** The catalogue name a requested name stands for (models/operator-aliases.ts); itself when no alias matches. */
  modelAlias: (name: string) => string
  backend: Backend
  /** Most content parts one chat request may turn into (Markdown images inside text count). Default unlimited. */
  maxTotalParts?: number
  fetchImage?: (url: string, signal?: AbortSignal, allowance?: ImageAllowance) => Promise<FetchedImage>
  maxImageUrls?: number
  /** Largest single fetched image, in bytes. */
  maxImageBytes?: number
  safetySettings: readonly SafetySetting[]
  keepAliveMs: number
  maxBodyBytes: number
  /** Shared by the routes that take bodies; none means no limit. */
  bodyBudget?: BodyBudget
  /** How long hosts wait for a body. */
  bodyRead?: BodyReadLimits
  logger?: Logger
  observer?: ProxyObserver
}
