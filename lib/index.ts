// The whole public API of the Gatehouse library. Everything else in lib/ is internal.

// Services
export { createAuthService } from './auth/service.ts'
export type { AuthService } from './auth/service.ts'
export type { AuthServiceOptions, AuthEvent, Argon2Params, LoginLimits, SignupLimits } from './auth/options.ts'
export { createProxy } from './proxy/create-proxy.ts'
export type { Proxy, ProxyOptions, ProxyResourceOptions } from './proxy/create-proxy.ts'
export type { ResponsesOptions } from './proxy/responses/settings.ts'
export { DEFAULT_SOCKET_LIMITS } from './proxy/responses/socket-limits.ts'
export type { SocketLimits } from './proxy/responses/socket-limits.ts'
export type { PasswordAttemptLimits } from './proxy/access/password-attempts.ts'
export type { KeyCaller, KeyResolver, ProxyCaller } from './proxy/access/caller.ts'
export type { ModelAccess } from './proxy/access/model-policy.ts'
export type { ModelAliases } from './proxy/models/operator-aliases.ts'
export { createBackend } from './proxy/upstream/create-backend.ts'
export type { BackendOptions } from './proxy/upstream/create-backend.ts'
export type { Backend, ProxyObserver, UpstreamCall, GeminiRequest, GeminiResponse, ReadyState, ForwardRequest, ForwardResponse, EmbedCall, EmbedResult } from './proxy/upstream/backend.ts'
export type { CredentialState, CredentialStatus, ListedModel, ModelListing } from './proxy/upstream/backend.ts'
export type { UpstreamView } from './proxy/create-proxy.ts'
export { createConsole } from './console/create-console.ts'
export type { Console, ConsoleOptions } from './console/create-console.ts'
export { createModelCatalog, DEFAULT_MODELS } from './proxy/models/catalog.ts'
export type { ModelCatalog } from './proxy/models/catalog.ts'

// Metering
export { createRateLimiter, RateLimitedError } from './metering/rate-limiter.ts'
export type { RateLimiter, RateLimiterOptions, Admission, LimitName, Standing } from './metering/rate-limiter.ts'
export type { RateLimits, LimitsByLevel, LevelLimits, ResourceKind } from './metering/limits-rule.ts'
export { createUsageLedger } from './metering/usage-ledger.ts'
export type { UsageLedger, UsageLedgerOptions, UsageEntry, SetTimer } from './metering/usage-ledger.ts'
export type { TokenUsage } from './metering/token-usage.ts'
export { createPriceList, callCost, callUsageOf, cacheStorageCost, formatMicros } from './metering/call-cost.ts'
export type { PriceList, PriceListOptions, PricedCall, CallUsage, CallCost, PricedCost, UnpricedCost } from './metering/call-cost.ts'
export { parseDollars, DEFAULT_PRICES_FILE } from './metering/prices.ts'
export type { PriceEntry, LongContextPrice } from './metering/prices.ts'

// Storage adapters
export { createEmbeddedStore } from './store/embedded-store.ts'
export type { EmbeddedStoreOptions } from './store/embedded-store.ts'
export { createMongoStore } from './store/mongo-store.ts'
export type { MongoStoreOptions } from './store/mongo-store.ts'
export { instrumentStore } from './store/instrument-store.ts'
export type { StoreObserver } from './store/instrument-store.ts'
export { ACCESS_LEVELS, RESPONSE_RECORD_MAX_CHARS } from './store/types.ts'
export type { Store, UserStore, SessionStore, AttemptStore, UserRecord, UserPatch, SessionRecord, AttemptCount, AccessLevel } from './store/types.ts'
export type { KeyStore, KeyRecord, NewKeyRecord, LimitStore, UserLimits, CounterStore, LeaseStore, UsageStore, UsageRecord, UsageQuery, OwnerStore, OwnerRecord, ResponseStore, ResponseRecord } from './store/types.ts'

// Host adapters and the handler contract
export { createNodeListener } from './http/node-adapter.ts'
export type { NodeListener, NodeListenerOptions } from './http/node-adapter.ts'
export { createFetchHandler } from './http/fetch-adapter.ts'
export { hapiPlugin, hapiRouteTemplate, mountRoutes } from './http/hapi-adapter.ts'
export type { HapiPluginOptions, MountOptions } from './http/hapi-adapter.ts'
export type { FetchHandlerOptions } from './http/fetch-adapter.ts'
export { readJsonBody } from './http/json-body.ts'
export { addressBucket, clientAddress, parseTrustedProxies } from './http/client-address.ts'
export type { TrustedProxies } from './http/client-address.ts'
export type { Route, RouteTable, Handler, HandlerRequest, HandlerResponse, StreamBody, Surface, SocketObserver, SocketRequest, UpgradeHost } from './http/contract.ts'
export { authenticateRoute } from './http/contract.ts'
export { reserveBody } from './http/body-budget.ts'
export type { BodyBudget } from './http/body-budget.ts'
export type { BodyReadLimits } from './http/read-body.ts'

// Logging and errors
export { SILENT_LOGGER } from './logger.ts'
export type { Logger } from './logger.ts'
export { GatehouseError, ERRORS, fail, isGatehouseError, ConfigurationError } from './errors.ts'
export type { ErrorCode, ErrorExtra } from './errors.ts'

// The environment, read as the gateway reads it (docs/configuration.md), and the options it sets
export { readEnvironment, EnvironmentError, configurationErrorLine } from './env/read-environment.ts'
export type { EnvironmentConfig, LogLevel } from './env/read-environment.ts'
export { environmentOptions } from './env/environment-options.ts'
export type { EnvironmentOptions } from './env/environment-options.ts'

// Option rules, for a host that checks its own settings before building anything
export { OPTION_RULES } from './option-rules.ts'
export type { BackendKind } from './option-rules.ts'
