// Type tests of the published API (tstyche, in `npm test`; test/package/pack.test.ts runs them again against
// the packed declarations). They import 'gatehouse' as a consumer does and pin what a consumer relies on:
// what is required and what optional, what is assignable, what each call returns. Adding an optional option,
// a store method or an error code keeps them green; removing or narrowing one does not.
import type { RequestListener } from 'node:http'
import { describe, expect, test } from 'tstyche'
import {
  createAuthService, createProxy, createBackend, createEmbeddedStore, createMongoStore, instrumentStore,
  createNodeListener, createFetchHandler, hapiPlugin, hapiRouteTemplate, GatehouseError, ERRORS, fail, isGatehouseError, ACCESS_LEVELS, ConfigurationError,
  OPTION_RULES
} from 'gatehouse'
import type {
  Route, Handler, HandlerRequest, HandlerResponse, StreamBody, Surface, Backend, UpstreamCall, GeminiResponse,
  ReadyState, Store, UserStore, SessionStore, AttemptStore, UserRecord, UserPatch, SessionRecord, AttemptCount,
  AccessLevel, AuthServiceOptions, AuthService, AuthEvent, ProxyOptions, Proxy, BackendOptions, ErrorCode, Logger,
  ProxyObserver, BodyBudget, RouteTable, HapiPluginOptions, KeyStore, KeyRecord, NewKeyRecord, LimitStore, UserLimits,
  CounterStore, LeaseStore, UsageStore, UsageRecord, UsageQuery, BackendKind
} from 'gatehouse'
import { createUsageLedger, createPriceList, callCost, formatMicros } from 'gatehouse'
import type { PriceList, PricedCall, CallUsage, CallCost, PriceEntry } from 'gatehouse'
import type { UsageLedger, UsageEntry, TokenUsage } from 'gatehouse'

declare const store: Store
declare const routes: Route[]

describe('the handler contract', () => {
  test('HandlerRequest: method, path, params, query and headers are required; body, remoteAddress and signal are not', () => {
    expect<HandlerRequest>().type.toBeAssignableFrom<{ method: string, path: string, params: Record<string, string>, query: Record<string, string>, headers: Record<string, string | undefined> }>()
    expect<HandlerRequest>().type.not.toBeAssignableFrom<{ method: string, path: string, params: Record<string, string>, query: Record<string, string> }>()
    expect<HandlerRequest['headers']>().type.toBe<Record<string, string | undefined>>()
    expect<HandlerRequest['body']>().type.toBe<unknown>()
    expect<HandlerRequest['remoteAddress']>().type.toBe<string | undefined>()
    expect<HandlerRequest['signal']>().type.toBe<AbortSignal | undefined>()
  })

  test('HandlerResponse: a status is enough; headers are strings; the body is any JSON value or a stream', () => {
    expect<HandlerResponse>().type.toBeAssignableFrom<{ status: number }>()
    expect<HandlerResponse>().type.not.toBeAssignableFrom<{ body: unknown }>()
    expect<HandlerResponse['headers']>().type.toBe<Record<string, string> | undefined>()
    expect<HandlerResponse['body']>().type.toBe<unknown>()
  })

  test('StreamBody: any async iterable of strings or bytes, e.g. an async generator', () => {
    async function * sse (): AsyncGenerator<string> { yield 'data: {}\n\n' }
    expect(sse()).type.toBeAssignableTo<StreamBody>()
    expect<AsyncIterable<Uint8Array>>().type.toBeAssignableTo<StreamBody>()
    expect<AsyncIterable<number>>().type.not.toBeAssignableTo<StreamBody>()
  })

  test('Handler: an async function of a HandlerRequest; a synchronous one is not a Handler', () => {
    expect<Handler>().type.toBe<(req: HandlerRequest) => Promise<HandlerResponse>>()
    expect(async (_req: HandlerRequest) => ({ status: 204 })).type.toBeAssignableTo<Handler>()
    expect((_req: HandlerRequest) => ({ status: 204 })).type.not.toBeAssignableTo<Handler>()
  })

  test('Route: method, path, handler, maxBytes and errorResponse are required; bodyBudget is not; no surface field', () => {
    const handler: Handler = async () => ({ status: 200, body: {} })
    const errorResponse = (_err: unknown): HandlerResponse => ({ status: 500 })
    expect({ method: 'GET', path: '/x/{id}', handler, maxBytes: 1024, errorResponse }).type.toBeAssignableTo<Route>()
    expect({ method: 'GET', path: '/x/{id}', maxBytes: 1024, errorResponse }).type.not.toBeAssignableTo<Route>()
    expect<Route>().type.not.toHaveProperty('surface')
    expect<Route['bodyBudget']>().type.toBe<BodyBudget | undefined>()
    expect<Route['errorResponse']>().type.toBe<(err: unknown, req?: HandlerRequest) => HandlerResponse>()
    // A mapper that ignores the request still fits; one that picks the shape by the request gets it.
    expect((_err: unknown, req?: HandlerRequest): HandlerResponse => ({ status: req === undefined ? 500 : 502 })).type.toBeAssignableTo<Route['errorResponse']>()
    expect<Surface>().type.toBeAssignableFrom<'auth' | 'chat' | 'native' | 'ops'>()
    expect<Surface>().type.not.toBeAssignableFrom<string>()
  })

  test('route tables mount in node:http (and Express) and in fetch-style runtimes', () => {
    expect(createNodeListener(routes)).type.toBeAssignableTo<RequestListener>()
    expect(createNodeListener).type.toBeCallableWith(routes as readonly Route[])
    expect(createFetchHandler(routes)).type.toBeAssignableTo<(request: Request) => Promise<Response>>()
  })

  test('a service hands its routes over as a scoped table, which every host and the Hapi plugin take', () => {
    expect<RouteTable>().type.toBeAssignableFrom<{ scope: string, routes: Route[], errorResponse: (err: unknown) => HandlerResponse }>()
    expect<RouteTable>().type.not.toBeAssignableFrom<{ routes: Route[] }>()
    expect(createAuthService({ store }).routeTable).type.toBe<RouteTable>()
    expect(createProxy().routeTable).type.toBe<RouteTable>()
    expect(createNodeListener).type.toBeCallableWith([createAuthService({ store }).routeTable, createProxy().routeTable])
    expect(createFetchHandler).type.toBeCallableWith(createProxy().routeTable)
    expect<HapiPluginOptions>().type.toBeAssignableFrom<{ tables: RouteTable[] }>()
    expect(hapiPlugin).type.toHaveProperty('register')
    expect(hapiRouteTemplate).type.toBe<(request: import('@hapi/hapi').Request) => string | undefined>()
  })
})

describe('the accounts service', () => {
  test('AuthServiceOptions: the store is required, every other option optional', () => {
    expect<AuthServiceOptions>().type.toBeAssignableFrom<{ store: Store }>()
    expect<AuthServiceOptions>().type.not.toBeAssignableFrom<{ basePath: string }>()
    expect(createAuthService).type.toBeCallableWith({ store })
    expect(createAuthService).type.not.toBeCallableWith({})
    expect(createAuthService).type.not.toBeCallableWith()
  })

  test('AuthServiceOptions: the documented options keep their types', () => {
    expect<AuthServiceOptions>().type.toBeAssignableFrom<{
      store: Store
      basePath: string
      sessionTtlSeconds: number
      adminUsername: string
      adminPassword: string
      argon2: { memoryCost: number }
      argon2Concurrency: number
      loginLimits: { perUsername: number, perAddress: number, windowSeconds: number }
      now: () => Date
      logger: Logger
      onEvent: (event: string) => void
      maxBodyBytes: number
    }>()
    expect<AuthServiceOptions>().type.not.toBeAssignableFrom<{ store: Store, sessionTtlSeconds: string }>()
    expect<AuthEvent>().type.toBeAssignableTo<string>()
    expect<AuthEvent>().type.toBeAssignableFrom<'session_created' | 'session_ended' | 'session_expired' | 'login_success' | 'login_failure' | 'login_lockout'>()
  })

  test('createAuthService returns the route table and ensureSystemUser (nothing to close: the store\'s owner closes the store)', () => {
    const auth = createAuthService({ store })
    expect(auth).type.toBe<AuthService>()
    expect(auth.routes).type.toBe<Route[]>()
    expect(auth.ensureSystemUser()).type.toBeAssignableTo<Promise<{ username: string, created: boolean, generatedPassword?: string }>>()
    expect(auth).type.not.toHaveProperty('close')
  })
})

describe('the model proxy', () => {
  test('ProxyOptions: everything is optional, so createProxy() works unconfigured', () => {
    expect(createProxy).type.toBeCallableWith()
    expect(createProxy).type.toBeCallableWith({})
    expect<ProxyOptions>().type.toBeAssignableFrom<{
      password: string
      backend: Backend
      upstream: BackendOptions
      models: readonly string[]
      keepAliveMs: number
      imageFetch: false
      maxBodyBytes: number
      maxBodyBytesInFlight: number | false
      logger: Logger
      observer: ProxyObserver
    }>()
    expect<ProxyOptions>().type.not.toBeAssignableFrom<{ password: number }>()
  })

  test('createProxy returns the route table, ready and close', () => {
    const proxy = createProxy({ password: 'pw' })
    expect(proxy).type.toBe<Proxy>()
    expect(proxy.routes).type.toBe<Route[]>()
    expect(proxy.ready()).type.toBe<Promise<ReadyState>>()
    expect(proxy.close()).type.toBe<Promise<void>>()
    expect(createBackend({ apiKey: 'k' })).type.toBe<Backend>()
  })

  test('Backend: a backend of your own implements these members with these signatures', () => {
    expect<Backend>().type.not.toHaveProperty('kind')
    expect<(call: UpstreamCall) => Promise<GeminiResponse>>().type.toBeAssignableTo<Backend['generate']>()
    expect<(call: UpstreamCall) => Promise<AsyncIterable<GeminiResponse>>>().type.toBeAssignableTo<Backend['stream']>()
    expect<(call: UpstreamCall) => Promise<{ totalTokens: number }>>().type.toBeAssignableTo<Backend['countTokens']>()
    expect<() => Promise<ReadyState>>().type.toBeAssignableTo<Backend['ready']>()
    expect<() => Promise<void>>().type.toBeAssignableTo<Backend['close']>()
    expect<(call: UpstreamCall) => GeminiResponse>().type.not.toBeAssignableTo<Backend['generate']>()
    expect(createProxy).type.toBeCallableWith({ backend: {} as Backend })
  })

  test('Backend: the proxy can rely on what its members return', () => {
    expect<ReturnType<Backend['generate']>>().type.toBeAssignableTo<Promise<Record<string, unknown>>>()
    expect<ReturnType<Backend['stream']>>().type.toBeAssignableTo<Promise<AsyncIterable<GeminiResponse>>>()
    expect<ReturnType<Backend['countTokens']>>().type.toBeAssignableTo<Promise<{ totalTokens: number }>>()
    expect<ReturnType<Backend['ready']>>().type.toBe<Promise<ReadyState>>()
  })

  test('UpstreamCall: model and request are required; signal and sessionId are not', () => {
    expect<UpstreamCall>().type.toBeAssignableFrom<{ model: string, request: Record<string, unknown> }>()
    expect<UpstreamCall>().type.not.toBeAssignableFrom<{ model: string }>()
    expect<UpstreamCall['signal']>().type.toBe<AbortSignal | undefined>()
    expect<UpstreamCall['sessionId']>().type.toBe<string | undefined>()
    expect<ReadyState>().type.toBeAssignableFrom<{ ok: boolean }>()
  })
})

describe('the storage port', () => {
  test('Store: kind, users, sessions, attempts, ping, flush and close', () => {
    expect<Store['kind']>().type.toBe<string>()
    expect<Store['users']>().type.toBe<UserStore>()
    expect<Store['sessions']>().type.toBe<SessionStore>()
    expect<Store['attempts']>().type.toBe<AttemptStore>()
    expect<Store['keys']>().type.toBe<KeyStore>()
    expect<Store['limits']>().type.toBe<LimitStore>()
    expect<Store['counters']>().type.toBe<CounterStore>()
    expect<Store['leases']>().type.toBe<LeaseStore>()
    expect<Store['usage']>().type.toBe<UsageStore>()
    expect<ReturnType<Store['ping']>>().type.toBe<Promise<void>>()
    expect<ReturnType<Store['flush']>>().type.toBe<Promise<void>>()
    expect<ReturnType<Store['close']>>().type.toBe<Promise<void>>()
  })

  test('the adapters and instrumentStore give a Store', () => {
    expect(createEmbeddedStore()).type.toBe<Promise<Store>>()
    expect(createEmbeddedStore).type.toBeCallableWith({ file: 'data/store.json' })
    expect(createMongoStore).type.toBeCallableWith({ url: 'mongodb://127.0.0.1:27017', dbName: 'gatehouse' })
    expect(createMongoStore).type.not.toBeCallableWith({ url: 'mongodb://127.0.0.1:27017' })
    expect(createMongoStore({ url: 'mongodb://127.0.0.1:27017', dbName: 'gatehouse' })).type.toBe<Promise<Store>>()
    expect(instrumentStore(store, () => {})).type.toBe<Store>()
  })

  test('UserStore: each method takes and returns what the services rely on', () => {
    expect<(user: UserRecord) => Promise<void>>().type.toBeAssignableTo<UserStore['insert']>()
    expect<(id: string) => Promise<UserRecord | null>>().type.toBeAssignableTo<UserStore['findById']>()
    expect<(usernameKey: string) => Promise<UserRecord | null>>().type.toBeAssignableTo<UserStore['findByUsernameKey']>()
    expect<(fragment: string, limit: number) => Promise<string[]>>().type.toBeAssignableTo<UserStore['searchUsernames']>()
    expect<(limit: number, offset: number) => Promise<UserRecord[]>>().type.toBeAssignableTo<UserStore['list']>()
    expect<(id: string, patch: UserPatch) => Promise<UserRecord | null>>().type.toBeAssignableTo<UserStore['update']>()
    expect<(level: AccessLevel) => Promise<number>>().type.toBeAssignableTo<UserStore['countByAccessLevel']>()
    expect<ReturnType<UserStore['findById']>>().type.toBe<Promise<UserRecord | null>>()
    expect<ReturnType<UserStore['update']>>().type.toBe<Promise<UserRecord | null>>()
  })

  test('SessionStore and AttemptStore: each method takes and returns what the services rely on', () => {
    expect<(session: SessionRecord) => Promise<void>>().type.toBeAssignableTo<SessionStore['put']>()
    expect<(tokenHash: string) => Promise<SessionRecord | null>>().type.toBeAssignableTo<SessionStore['findByTokenHash']>()
    expect<(tokenHash: string) => Promise<boolean>>().type.toBeAssignableTo<SessionStore['delete']>()
    expect<(userId: string, keepTokenHash?: string) => Promise<number>>().type.toBeAssignableTo<SessionStore['deleteByUser']>()
    expect<ReturnType<SessionStore['findByTokenHash']>>().type.toBe<Promise<SessionRecord | null>>()
    expect<(key: string, windowMs: number, now: Date) => Promise<AttemptCount>>().type.toBeAssignableTo<AttemptStore['hit']>()
    expect<(key: string, now: Date) => Promise<AttemptCount>>().type.toBeAssignableTo<AttemptStore['get']>()
    expect<(key: string) => Promise<void>>().type.toBeAssignableTo<AttemptStore['clear']>()
    expect<AttemptCount>().type.toBeAssignableTo<{ count: number, resetAt: Date }>()
  })

  test('KeyStore, LimitStore, CounterStore, LeaseStore and UsageStore: each method takes and returns what the limits and usage rely on', () => {
    expect<(key: NewKeyRecord) => Promise<void>>().type.toBeAssignableTo<KeyStore['create']>()
    expect<ReturnType<KeyStore['findByDigest']>>().type.toBe<Promise<KeyRecord | null>>()
    expect<ReturnType<KeyStore['get']>>().type.toBe<Promise<KeyRecord | null>>()
    expect<(userId: string) => Promise<KeyRecord[]>>().type.toBeAssignableTo<KeyStore['listByUser']>()
    expect<(keyId: string) => Promise<boolean>>().type.toBeAssignableTo<KeyStore['delete']>()
    expect<(userId: string, keyId: string) => Promise<boolean>>().type.toBeAssignableTo<KeyStore['deleteForUser']>()
    expect<(userId: string) => Promise<number>>().type.toBeAssignableTo<KeyStore['deleteAllForUser']>()
    expect<(keyId: string, lastUsedAt: Date) => Promise<void>>().type.toBeAssignableTo<KeyStore['touch']>()
    expect<(keyIds: readonly string[]) => Promise<Map<string, string>>>().type.toBeAssignableTo<KeyStore['names']>()
    expect<KeyRecord>().type.toBeAssignableTo<{
      keyId: string
      userId: string
      name: string
      digest: string
      prefix: string
      createdAt: Date
      expiresAt: Date | null
      lastUsedAt: Date | null
      models: string[] | null
    }>()
    expect<ReturnType<LimitStore['get']>>().type.toBe<Promise<UserLimits | null>>()
    expect<(userId: string, limits: UserLimits) => Promise<void>>().type.toBeAssignableTo<LimitStore['set']>()
    expect<(userId: string) => Promise<boolean>>().type.toBeAssignableTo<LimitStore['clear']>()
    expect<UserLimits>().type.toBeAssignableFrom<{ rpm: number, tpm: null }>()
    expect<UserLimits>().type.toBeAssignableFrom<{ tokensPerDay: number, concurrent: null }>()
    expect<(key: string, windowStart: Date, amount: number, expiresAt: Date) => Promise<number>>().type.toBeAssignableTo<CounterStore['add']>()
    expect<(key: string, windowStart: Date) => Promise<number>>().type.toBeAssignableTo<CounterStore['get']>()
    expect<(key: string, leaseId: string, limit: number, now: Date, expiresAt: Date) => Promise<boolean>>().type.toBeAssignableTo<LeaseStore['acquire']>()
    expect<(key: string, leaseId: string, now: Date, expiresAt: Date) => Promise<boolean>>().type.toBeAssignableTo<LeaseStore['renew']>()
    expect<(key: string, leaseId: string) => Promise<void>>().type.toBeAssignableTo<LeaseStore['release']>()
    expect<(key: string, now: Date) => Promise<number>>().type.toBeAssignableTo<LeaseStore['count']>()
    expect<(batch: UsageRecord[]) => Promise<void>>().type.toBeAssignableTo<UsageStore['record']>()
    expect<(query: UsageQuery) => Promise<UsageRecord[]>>().type.toBeAssignableTo<UsageStore['query']>()
    expect<UsageQuery>().type.toBeAssignableFrom<{ from: string, to: string }>()
  })

  test('the records: the fields every adapter stores, with their types', () => {
    expect<UserRecord>().type.toBeAssignableTo<{
      id: string
      username: string
      usernameKey: string
      passwordHash: string
      email: string | null
      accessLevel: AccessLevel
      dateJoined: Date
    }>()
    expect<SessionRecord>().type.toBeAssignableTo<{ tokenHash: string, userId: string, device: string, createdAt: Date, expiresAt: Date }>()
    expect({}).type.toBeAssignableTo<UserPatch>()
    expect<UserPatch>().type.toBeAssignableFrom<{ passwordHash: string, accessLevel: 'hush' }>()
    expect<UserPatch>().type.not.toBeAssignableFrom<{ accessLevel: 'root' }>()
  })

  test('AccessLevel: the five levels, from least to most privileged in ACCESS_LEVELS', () => {
    expect<AccessLevel>().type.toBe<'default' | 'member' | 'admin' | 'dev' | 'hush'>()
    expect(ACCESS_LEVELS).type.toBe<readonly ['default', 'member', 'admin', 'dev', 'hush']>()
  })
})

describe('errors', () => {
  test('GatehouseError is an Error with a catalogue code, a status and the upstream details', () => {
    expect<GatehouseError>().type.toBeAssignableTo<Error>()
    expect<GatehouseError['code']>().type.toBe<ErrorCode>()
    expect<GatehouseError['status']>().type.toBe<number>()
    expect<GatehouseError['retryAfter']>().type.toBe<number | undefined>()
    expect<GatehouseError['upstreamStatus']>().type.toBe<number | undefined>()
    expect(GatehouseError).type.toBeConstructableWith('USERNAME_TAKEN')
    expect(GatehouseError).type.toBeConstructableWith('UPSTREAM_RATE_LIMITED', 'slow down', { retryAfter: 30 })
    expect(GatehouseError).type.not.toBeConstructableWith('NO_SUCH_CODE')
    expect(fail('SESSION_EXPIRED')).type.toBe<GatehouseError>()
    expect(isGatehouseError).type.toBe<(err: unknown) => err is GatehouseError>()
  })

  test('ConfigurationError: a TypeError naming the option, with the code it replaced where there was one', () => {
    expect<ConfigurationError>().type.toBeAssignableTo<TypeError>()
    expect<ConfigurationError['option']>().type.toBe<string>()
    expect<ConfigurationError['code']>().type.toBe<ErrorCode | undefined>()
    expect(ConfigurationError).type.toBeConstructableWith('upstream.codeAssistEndpoint', 'must be an http(s) URL')
  })

  test('OPTION_RULES: the rules a host checks its own settings with before it builds anything', () => {
    expect(OPTION_RULES.usernamePattern).type.toBe<RegExp>()
    expect(OPTION_RULES.passwordMin).type.toBeAssignableTo<number>()
    expect(OPTION_RULES.proxyPasswordMinLength).type.toBeAssignableTo<number>()
    expect(OPTION_RULES.backendKinds).type.toBe<readonly BackendKind[]>()
    expect(OPTION_RULES.chooseBackend({ hasOAuth: false, hasKey: true })).type.toBe<BackendKind | undefined>()
    expect(OPTION_RULES.backendProblem({ hasOAuth: true, hasKey: false })).type.toBe<string | undefined>()
    expect(OPTION_RULES.isPort(443)).type.toBe<boolean>()
    expect(OPTION_RULES.vertexLocationProblem('us-central1,europe-west4', { hasProject: true, hasEndpoint: false }, { project: 'GOOGLE_CLOUD_PROJECT', endpoint: 'VERTEX_ENDPOINT' })).type.toBe<string | undefined>()
    expect<BackendOptions['backend']>().type.toBe<BackendKind | undefined>()
  })

  test('ErrorCode: every documented code stays; unknown codes are rejected', () => {
    expect<ErrorCode>().type.toBeAssignableTo<string>()
    expect<ErrorCode>().type.toBeAssignableFrom<
      'INVALID_INPUT' | 'USER_AGENT_REQUIRED' | 'USERNAME_TAKEN' | 'NO_ACTIVE_SESSION' | 'LAST_HUSH_USER' |
      'INVALID_CREDENTIALS' | 'SESSION_NOT_FOUND' | 'SESSION_EXPIRED' | 'DEVICE_MISMATCH' | 'INVALID_TOKEN' |
      'INSUFFICIENT_PERMISSIONS' | 'USER_NOT_FOUND' | 'USERNAME_NOT_FOUND' | 'TOO_MANY_ATTEMPTS' |
      'NOT_FOUND' | 'METHOD_NOT_ALLOWED' | 'PAYLOAD_TOO_LARGE' | 'UNSUPPORTED_MEDIA_TYPE' | 'INVALID_JSON' | 'INTERNAL' |
      'PROXY_PASSWORD_UNSET' | 'PROXY_UNAUTHENTICATED' | 'MODEL_NOT_FOUND' | 'IMAGE_FETCH_FAILED' |
      'UPSTREAM_NOT_CONFIGURED' | 'UPSTREAM_CREDENTIALS_REJECTED' | 'UPSTREAM_CREDENTIALS_UNUSABLE' |
      'UPSTREAM_SETUP_FAILED' | 'UPSTREAM_BAD_REQUEST' | 'UPSTREAM_PERMISSION_DENIED' | 'UPSTREAM_NOT_FOUND' |
      'UPSTREAM_RATE_LIMITED' | 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_ERROR' | 'UPSTREAM_TIMEOUT' |
      'REQUEST_TIMEOUT' | 'SERVER_BUSY' | 'CLIENT_CLOSED_REQUEST'
    >()
    expect<ErrorCode>().type.not.toBeAssignableFrom<'NO_SUCH_CODE'>()
    expect<keyof typeof ERRORS>().type.toBe<ErrorCode>()
    expect(ERRORS).type.toBeAssignableTo<Readonly<Record<ErrorCode, { readonly status: number, readonly message: string }>>>()
  })
})

describe('package exports', () => {
  test('only the entry is exported: internal modules cannot be imported through the package', async () => {
    // @ts-expect-error: Cannot find module 'gatehouse/lib/errors.ts'
    await import('gatehouse/lib/errors.ts')
    // @ts-expect-error: Cannot find module 'gatehouse/dist/lib/errors.js'
    await import('gatehouse/dist/lib/errors.js')
    // @ts-expect-error: Cannot find module 'gatehouse/lib/store/types'
    await import('gatehouse/lib/store/types')
    expect<typeof import('gatehouse/package.json')>().type.toHaveProperty('version')
  })
})

describe('the usage ledger', () => {
  test('createUsageLedger takes a store with a usage part; every other option is optional', () => {
    expect(createUsageLedger).type.toBeCallableWith({ store })
    expect(createUsageLedger).type.toBeCallableWith({ store: { usage: store.usage }, flushIntervalMs: 1000, maxRows: 10, logger: undefined })
    expect(createUsageLedger).type.not.toBeCallableWith({})
    expect(createUsageLedger({ store })).type.toBe<UsageLedger>()
  })

  test('UsageEntry: the call\'s day, owner, key, model, surface (any surface\'s name) and status are required; its tokens are not', () => {
    expect<UsageEntry>().type.toBeAssignableFrom<{ at: Date, userId: string, keyId: string | null, model: string, surface: 'chat' | 'native', status: number }>()
    expect<UsageEntry>().type.toBeAssignableFrom<{ at: Date, userId: string, keyId: string | null, model: string, surface: 'responses', status: number }>()
    expect<UsageEntry>().type.not.toBeAssignableFrom<{ at: Date, userId: string, keyId: string | null, model: string, surface: 42, status: number }>()
    expect<UsageEntry['usage']>().type.toBe<TokenUsage | undefined>()
    expect<ReturnType<UsageLedger['record']>>().type.toBe<void>()
    expect<ReturnType<UsageLedger['close']>>().type.toBe<Promise<void>>()
  })
})

describe('prices', () => {
  test('createPriceList: every option is optional; a call needs its model, backend, instant and prompt tokens', () => {
    expect(createPriceList).type.toBeCallableWith()
    expect(createPriceList).type.toBeCallableWith({ pricesFile: '/etc/prices.json' })
    expect(createPriceList()).type.toBe<PriceList>()
    expect<PricedCall>().type.toBeAssignableFrom<{ model: string, backend: string, at: Date, usage: { promptTokens: number } }>()
    expect<PricedCall>().type.not.toBeAssignableFrom<{ model: string, backend: string, usage: { promptTokens: number } }>()
    expect<CallUsage>().type.not.toBeAssignableFrom<{ cachedTokens: number }>()
    expect<Proxy['prices']>().type.toBe<PriceList>()
    expect<ProxyOptions['pricesFile']>().type.toBe<string | undefined>()
  })

  test('a cost is priced, in whole micro-dollars with the entry that applied, or unpriced with a message', () => {
    expect<ReturnType<PriceList['cost']>>().type.toBe<CallCost>()
    expect<Extract<CallCost, { priced: true }>['micros']>().type.toBe<number>()
    expect<Extract<CallCost, { priced: true }>['entry']>().type.toBe<PriceEntry>()
    expect<Extract<CallCost, { priced: false }>['message']>().type.toBe<string>()
    expect(callCost).type.toBeCallableWith({} as PriceEntry, { promptTokens: 1 })
    expect(formatMicros(1)).type.toBe<string>()
  })
})
