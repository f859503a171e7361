// Which Code Assist project the calls run under, found the way gemini-cli finds it (docs/upstream-protocol.md,
// "Project discovery"): loadCodeAssist (with the configured project, if any), a validation link when the account must
// be verified, otherwise onboardUser for the default tier (free tier without a project) and polling of
// the long-running operation, capped. One discovery at a time per credential; the result is cached.
import { setTimeout as sleep } from 'node:timers/promises'
import { fail, isGatehouseError } from '../../errors.ts'
import type { ErrorCode } from '../../errors.ts'
import type { OAuthCredential } from './credentials.ts'
import type { UpstreamAuth, UpstreamClient } from './client.ts'
import { errorReasons } from './errors.ts'
import { SILENT_LOGGER } from '../../logger.ts'
import type { Logger } from '../../logger.ts'

export interface CodeAssistSetupOptions {
  /** Code Assist base URL, no trailing slash. */
  endpoint: string
  client: UpstreamClient
  auth: UpstreamAuth
  credential: OAuthCredential
  /** Configured project (GOOGLE_CLOUD_PROJECT and aliases): sent to loadCodeAssist and onboardUser. */
  project?: string
  /** Wait between polls of the onboarding operation in ms. Default 5000. */
  pollIntervalMs?: number
  /** Give up on onboarding after this many ms. Default 120000. */
  pollTimeoutMs?: number
  logger?: Logger
}

export interface CodeAssistSetup {
  /** The project id; discovers it on first use (single-flight). Throws UPSTREAM_SETUP_FAILED or a credential error. */
  project (): Promise<string>
  /** A fresh loadCodeAssist through the credential (a credential pool's re-probe); rejects with the upstream's error. */
  check (): Promise<void>
  /** Stops a running onboarding wait. */
  close (): void
}

interface Tier {
  id?: string
  name?: string
  isDefault?: boolean
  userDefinedCloudaicompanionProject?: boolean
}

interface IneligibleTier {
  reasonCode?: string
  reasonMessage?: string
  validationUrl?: string
}

interface LoadCodeAssistResponse {
  currentTier?: Tier
  allowedTiers?: Tier[]
  ineligibleTiers?: IneligibleTier[]
  cloudaicompanionProject?: unknown
}

interface Operation {
  name?: string
  done?: boolean
  error?: { message?: string }
  response?: { cloudaicompanionProject?: unknown }
}

const METADATA = { ideType: 'IDE_UNSPECIFIED', platform: 'PLATFORM_UNSPECIFIED', pluginType: 'GEMINI' }
// Credential and cancellation errors keep their own code: they are not a setup problem.
const PASS_THROUGH = new Set<ErrorCode>(['UPSTREAM_CREDENTIALS_UNUSABLE', 'UPSTREAM_CREDENTIALS_REJECTED', 'UPSTREAM_SETUP_FAILED', 'CLIENT_CLOSED_REQUEST'])

function projectIdOf (value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value
  if (value !== null && typeof value === 'object') {
    const id = (value as { id?: unknown }).id
    if (typeof id === 'string' && id !== '') return id
  }
  return undefined
}

function noProject (load: LoadCodeAssistResponse): Error {
  const reasons = (load.ineligibleTiers ?? []).map(t => t.reasonMessage).filter((m): m is string => typeof m === 'string' && m !== '')
  return fail('UPSTREAM_SETUP_FAILED', reasons.length > 0
    ? `This account cannot use Code Assist without a project: ${reasons.join('; ')}`
    : 'This account requires a Google Cloud project: set GOOGLE_CLOUD_PROJECT (or GEMINI_PROJECT_ID)')
}

export function createCodeAssistSetup (options: CodeAssistSetupOptions): CodeAssistSetup {
  const { endpoint, client, auth, credential } = options
  const logger = options.logger ?? SILENT_LOGGER
  const interval = options.pollIntervalMs ?? 5000
  const timeout = options.pollTimeoutMs ?? 120_000
  const envProject = options.project
  const closing = new AbortController()
  // A project stored with the credentials is a previous discovery; a configured one is checked upstream.
  let cached = envProject === undefined ? credential.projectId() : undefined
  let running: Promise<string> | undefined

  function rpc (method: string, body: unknown): Promise<unknown> {
    return client.json({ url: `${endpoint}/v1internal:${method}`, body, auth, signal: closing.signal })
  }

  async function loadCodeAssist (): Promise<LoadCodeAssistResponse> {
    try {
      return await rpc('loadCodeAssist', { cloudaicompanionProject: envProject, metadata: { ...METADATA, duetProject: envProject } }) as LoadCodeAssistResponse
    } catch (err) {
      // VPC Service Controls block loadCodeAssist for projects that can still call the API (gemini-cli does the same).
      if (isGatehouseError(err) && errorReasons(err.upstreamBody).includes('SECURITY_POLICY_VIOLATED')) {
        return { currentTier: { id: 'standard-tier' } }
      }
      throw err
    }
  }

  async function onboard (load: LoadCodeAssistResponse): Promise<Operation> {
    const tier = (load.allowedTiers ?? []).find(t => t.isDefault === true) ?? { id: 'legacy-tier', userDefinedCloudaicompanionProject: true }
    // The free tier runs in a Google-managed project; naming one makes onboardUser fail (Precondition Failed).
    const request = tier.id === 'free-tier'
      ? { tierId: tier.id, metadata: METADATA }
      : { tierId: tier.id, cloudaicompanionProject: envProject, metadata: { ...METADATA, duetProject: envProject } }
    logger.info({ tier: tier.id }, 'Onboarding the upstream account')
    const deadline = Date.now() + timeout
    let operation = await rpc('onboardUser', request) as Operation
    while (operation.done !== true) {
      if (Date.now() + interval > deadline) {
        throw fail('UPSTREAM_SETUP_FAILED', `Onboarding the upstream account did not finish within ${Math.round(timeout / 1000)} s; try again later`)
      }
      await sleep(interval, undefined, { signal: closing.signal })
      operation = typeof operation.name === 'string' && operation.name !== ''
        ? await client.json({ url: `${endpoint}/v1internal/${operation.name}`, method: 'GET', auth, signal: closing.signal }) as Operation
        : await rpc('onboardUser', request) as Operation
    }
    if (operation.error !== undefined) {
      throw fail('UPSTREAM_SETUP_FAILED', `Onboarding the upstream account failed: ${operation.error.message ?? 'unknown error'}`)
    }
    return operation
  }

  async function discover (): Promise<string> {
    const load = await loadCodeAssist()
    if (load.currentTier === undefined) {
      const validation = (load.ineligibleTiers ?? []).find(t => t.reasonCode === 'VALIDATION_REQUIRED' && typeof t.validationUrl === 'string')
      if (validation !== undefined) {
        throw fail('UPSTREAM_SETUP_FAILED', `Account validation required: ${validation.reasonMessage ?? 'the account must be verified'}. ` +
          `Open ${validation.validationUrl} with the same Google account, then retry.`)
      }
    } else {
      const project = projectIdOf(load.cloudaicompanionProject) ?? envProject
      if (project === undefined) throw noProject(load)
      return project
    }
    const operation = await onboard(load)
    const project = projectIdOf(operation.response?.cloudaicompanionProject) ?? envProject
    if (project === undefined) throw noProject(load)
    return project
  }

  function setupError (err: unknown): Error {
    if (isGatehouseError(err) && PASS_THROUGH.has(err.code)) return err
    if (closing.signal.aborted) return fail('UPSTREAM_UNAVAILABLE', 'The proxy is shutting down')
    const message = err instanceof Error ? err.message : String(err)
    return fail('UPSTREAM_SETUP_FAILED', `Upstream project discovery failed: ${message}`, {
      cause: err,
      upstreamStatus: isGatehouseError(err) ? err.upstreamStatus : undefined,
      retryAfter: isGatehouseError(err) ? err.retryAfter : undefined,
    })
  }

  return {
    project () {
      if (cached !== undefined) return Promise.resolve(cached)
      running ??= discover().then(project => {
        cached = project
        logger.info({ project }, 'Upstream project resolved')
        if (envProject === undefined) void credential.saveProjectId(project)
        return project
      }, err => {
        const error = setupError(err)
        logger.warn({ err: error.message }, 'Upstream project discovery failed')
        throw error
      }).finally(() => { running = undefined })
      return running
    },
    async check () {
      await loadCodeAssist()
    },
    close () {
      closing.abort()
    },
  }
}
