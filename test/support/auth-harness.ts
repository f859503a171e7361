// The accounts service on a real HTTP listener, for test/auth: mounted on Hapi exactly as the gateway
// mounts it (lib/http/hapi-adapter.ts), or on lib's node:http listener. Unlike startGateway() it takes
// the library's own options, so a test can use a fake clock, tight limits or cheap argon2.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import Hapi from '@hapi/hapi'
import type { AuthService, AuthEvent, AuthServiceOptions, Logger, Store } from '../../lib/index.ts'
import { hapiPlugin, createAuthService, createNodeListener, parseTrustedProxies, createEmbeddedStore } from '../../lib/index.ts'
import { authClient, DEVICE } from './auth-client.ts'
import type { AuthClient } from './auth-client.ts'

/** argon2id at almost no cost, for tests about something other than hashing. */
export const CHEAP_ARGON2 = Object.freeze({ memoryCost: 64, timeCost: 1, parallelism: 1 })

export interface HarnessOptions extends Partial<Omit<AuthServiceOptions, 'store'>> {
  /** Default: a fresh in-memory embedded store on the harness clock. */
  store?: Store
  /** Which host serves the routes. Default 'hapi'. */
  host?: 'hapi' | 'node'
  /** Use the service's default (OWASP) argon2 parameters instead of CHEAP_ARGON2. */
  realArgon2?: boolean
  /** Trusted proxies for the host (e.g. '127.0.0.1'), so a test can send X-Forwarded-For as any client. Default none. */
  trustedProxies?: string
}

export interface LogLine { level: string, obj: unknown, msg?: string }

export interface TestUser {
  username: string
  password: string
  userId: string
  token: string
  device: string
}

export interface AuthHarness extends AuthClient {
  /** Origin, e.g. http://127.0.0.1:12345. */
  origin: string
  store: Store
  service: AuthService
  events: AuthEvent[]
  logs: LogLine[]
  /** Every login delay the limiter waited out (ms); waiting moves the fake clock instead of the wall clock. */
  delays: number[]
  /** Moves the service's clock forward. */
  advance (seconds: number): void
  /** Signs up and logs in a new user (username unique per call unless given). */
  newUser (options?: { username?: string, password?: string, device?: string }): Promise<TestUser>
  /** The system user (level hush), logged in from DEVICE. */
  admin (): Promise<TestUser>
  /** Every stored user as JSON, to prove a request changed nothing. */
  snapshot (): Promise<string>
  close (): Promise<void>
}

export const ADMIN_PASSWORD = 'admin-password-for-tests'
let counter = 0

export async function startAuthHarness (options: HarnessOptions = {}): Promise<AuthHarness> {
  const { host = 'hapi', realArgon2 = false, store: given, trustedProxies, ...serviceOptions } = options
  let clock = Date.now()
  const store = given ?? await createEmbeddedStore({ now: () => new Date(clock) })
  const events: AuthEvent[] = []
  const logs: LogLine[] = []
  const delays: number[] = []
  const log = (level: string) => (obj: unknown, msg?: string) => { logs.push({ level, obj, msg }) }
  const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
  const service = createAuthService({
    store,
    adminPassword: ADMIN_PASSWORD,
    now: () => new Date(clock),
    sleep: async (ms) => { delays.push(ms); clock += ms },
    // Tests sign up many users from 127.0.0.1; the sign-up limit's own tests pass the default back.
    signupLimits: { perAddress: 100_000 },
    logger,
    onEvent: (e) => events.push(e),
    ...(realArgon2 ? {} : { argon2: CHEAP_ARGON2 }),
    ...serviceOptions,
  })
  await service.ensureSystemUser()

  let origin: string
  let stopServer: () => Promise<void>
  if (host === 'hapi') {
    const server = Hapi.server({ host: '127.0.0.1', port: 0, router: { stripTrailingSlash: false } })
    await server.register({
      plugin: hapiPlugin,
      options: { tables: [service.routeTable], logger, trustedProxies: trustedProxies === undefined ? undefined : parseTrustedProxies(trustedProxies) },
    })
    await server.start()
    origin = `http://127.0.0.1:${server.info.port}`
    stopServer = () => server.stop({ timeout: 1000 })
  } else {
    const server = http.createServer(createNodeListener(service.routeTable, { logger, trustedProxies }))
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    stopServer = () => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) })
  }

  const client = authClient(origin + (serviceOptions.basePath ?? '/v1/api'))

  async function newUser ({ username, password = 'correct horse battery', device = DEVICE }: { username?: string, password?: string, device?: string } = {}): Promise<TestUser> {
    const name = username ?? `user_${process.pid}_${++counter}`
    const signup = await client.signup(name, password)
    if (signup.status !== 201) throw new Error(`signup of ${name} answered ${signup.status} ${signup.text}`)
    return await loginAs(name, password, device)
  }

  async function loginAs (username: string, password: string, device: string): Promise<TestUser> {
    const login = await client.login(username, password, device)
    if (login.status !== 200) throw new Error(`login of ${username} answered ${login.status} ${login.text}`)
    return { username, password, userId: login.body.user_id, token: login.body.access_token, device }
  }

  return {
    ...client,
    origin,
    store,
    service,
    events,
    logs,
    delays,
    advance (seconds) { clock += seconds * 1000 },
    newUser,
    admin: () => loginAs(serviceOptions.adminUsername ?? 'system', serviceOptions.adminPassword ?? ADMIN_PASSWORD, DEVICE),
    snapshot: async () => JSON.stringify(await store.users.list(1000, 0)),
    async close () {
      await stopServer()
      if (given === undefined) await store.close()
    },
  }
}
