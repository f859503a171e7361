// The proxy's limits on the content a surface translates for one model call: safety settings, the image URLs it may
// fetch and their total, the parts it may produce, the request's signal. One owner, read by every surface's
// translation through its ModelCall (lib/proxy/call/lifecycle.ts).
import type { HandlerRequest } from '../../http/contract.ts'
import type { ProxyContext } from '../context.ts'
import type { FetchedImage, ImageAllowance } from '../images/fetch.ts'
import type { SafetySetting } from '../safety-settings.ts'

export interface ContentOptions {
  safetySettings: readonly SafetySetting[]
  /** Fetches http(s) image URLs; without it such parts are a 400. */
  fetchImage?: (url: string, signal?: AbortSignal, allowance?: ImageAllowance) => Promise<FetchedImage>
  /** Most http(s) image URLs one request may make the proxy fetch. Default unlimited. */
  maxImageUrls?: number
  /** Most bytes the fetched images of one request may total (a 400 beyond). Default unlimited. */
  maxImageBytes?: number
  /** Most Gemini parts the request may turn into (TOO_MANY_PARTS beyond). Default unlimited. */
  maxParts?: number
  signal?: AbortSignal
  /** Told when googleSearch is left out because function tools are present. */
  onSearchDropped?: () => void
}

/** A request's content options: the images it fetches total at most what a request body may hold. */
export function contentOptions (ctx: ProxyContext, req: HandlerRequest, model: string): ContentOptions {
  return {
    safetySettings: ctx.safetySettings,
    fetchImage: ctx.fetchImage,
    maxImageUrls: ctx.maxImageUrls,
    maxImageBytes: ctx.maxBodyBytes,
    maxParts: ctx.maxTotalParts,
    signal: req.signal,
    onSearchDropped: () => ctx.logger?.debug({ model }, 'function tools present: googleSearch left out'),
  }
}
