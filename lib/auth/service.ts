// createAuthService: the accounts-and-sessions service (docs/accounts.md), as a route table any host mounts.
import type { Route, RouteTable } from '../http/contract.ts'
import type { AuthServiceOptions } from './options.ts'
import type { SystemUserResult } from './accounts.ts'
import { resolveOptions } from './options.ts'
import { createPasswordHasher } from './passwords.ts'
import { createSessions } from './sessions.ts'
import { createLoginLimiter } from './login-limiter.ts'
import { createSignupLimiter } from './signup-limiter.ts'
import { createLookupLimiter } from './lookup-limiter.ts'
import { createAccounts } from './accounts.ts'
import { createSignInLinks } from './sign-in-links.ts'
import { createSettings } from './settings.ts'
import type { Settings } from './settings.ts'
import type { SignInLinks } from './sign-in-links.ts'
import { createAuthRoutes } from './routes.ts'
import { createKeys } from './keys.ts'
import type { KeyResolver } from '../proxy/access/caller.ts'
import type { ResolvedAuthOptions } from './options.ts'
import type { Accounts } from './accounts.ts'
import type { Sessions } from './sessions.ts'
import type { Keys } from './keys.ts'

/** What the console (lib/console/) builds on: the service's own rules, so the console never restates them. */
export interface AuthParts {
  options: ResolvedAuthOptions
  accounts: Accounts
  sessions: Sessions
  keys: Keys
  signInLinks: SignInLinks
  settings: Settings
}

// Kept out of the AuthService object, so the public type stays what users call.
const parts = new WeakMap<AuthService, AuthParts>()

/** The parts of a service createAuthService made; undefined for any other object. */
export function authParts (service: AuthService): AuthParts | undefined {
  return parts.get(service)
}

export interface AuthService extends KeyResolver {
  /** The routes under basePath, scoped to basePath, for hapiPlugin, createNodeListener() or createFetchHandler(). */
  readonly routeTable: RouteTable
  /** routeTable.routes. */
  readonly routes: Route[]
  /** Creates the system user at level hush if absent, or restores an existing one's level to hush and applies a changed adminPassword. */
  ensureSystemUser (): Promise<SystemUserResult>
}

export function createAuthService (options: AuthServiceOptions): AuthService {
  const resolved = resolveOptions(options)
  const { store, now, sleep, emit } = resolved
  const passwords = createPasswordHasher(resolved.argon2, resolved.argon2Concurrency)
  const sessions = createSessions({ sessions: store.sessions, users: store.users, ttlMs: resolved.sessionTtlMs, now, emit })
  const limiter = createLoginLimiter({ attempts: store.attempts, limits: resolved.loginLimits, now, sleep, emit })
  const signupLimiter = createSignupLimiter(store.attempts, resolved.signupLimits, now)
  const keys = createKeys({ store, minLevel: resolved.proxyMinAccessLevel, modelPolicy: resolved.modelPolicy, defaultDays: resolved.keyDefaultDays, now, logger: resolved.logger })
  const settings = createSettings(resolved)
  const accounts = createAccounts({ options: resolved, passwords, sessions, limiter, signupLimiter, keys, settings })
  const routeTable = createAuthRoutes({ options: resolved, lookupLimiter: createLookupLimiter(store.attempts, now), accounts, sessions, keys, settings })
  const service: AuthService = {
    routeTable,
    routes: routeTable.routes,
    ensureSystemUser: () => accounts.ensureSystemUser(),
    resolveKey: (secret) => keys.resolve(secret),
  }
  const signInLinks = createSignInLinks({ options: resolved, accounts, sessions, limiter })
  parts.set(service, { options: resolved, accounts, sessions, keys, signInLinks, settings })
  return service
}
