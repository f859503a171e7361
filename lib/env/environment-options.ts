// The library's options that a read environment sets (readEnvironment's result), in each factory's terms: the one
// mapping from variables to options, used by the gateway (gateway/services.ts) and by the examples alike.
import type { AuthServiceOptions } from '../auth/options.ts'
import type { ProxyOptions } from '../proxy/create-proxy.ts'
import type { BackendOptions } from '../proxy/upstream/create-backend.ts'
import type { ConsoleOptions } from '../console/create-console.ts'
import type { EmbeddedStoreOptions } from '../store/embedded-store.ts'
import type { LimitsByLevel } from '../metering/limits-rule.ts'
import type { EnvironmentConfig } from './read-environment.ts'

export interface EnvironmentOptions {
  /** createAuthService's options, without `store` and the host's hooks (logger, onEvent, clock). */
  auth: Omit<AuthServiceOptions, 'store'>
  /** createProxy's options, without `keys`, `limiter`, `usage` and the host's hooks; `resources.owners` is the host's store's. */
  proxy: ProxyOptions
  /** createRateLimiter's `byLevel` and the `resources.byLevel` of the proxy (GEMINI_LIMITS). */
  limits?: LimitsByLevel
  /** createConsole's options without `auth`, `proxy` and `limiter`; undefined when CONSOLE_ENABLED is false. */
  console?: Pick<ConsoleOptions, 'path' | 'allowHttp'>
  /** createEmbeddedStore's options (AUTH_DATA_FILE); the gateway opens MongoDB instead when `mongodb` is set. */
  embeddedStore: EmbeddedStoreOptions
  /** createMongoStore's `url` and `dbName` (MONGODB_URL, MONGODB_DB); undefined without MONGODB_URL. */
  mongodb?: { url: string, dbName: string }
}

/** The upstream part of the environment, in createProxy's terms; undefined when no upstream is configured. */
function upstreamOptions (config: EnvironmentConfig): BackendOptions | undefined {
  if (config.geminiBackend === undefined) return undefined
  return {
    backend: config.geminiBackend,
    credentials: config.geminiCredentials,
    credentialsFile: config.credentialsFile,
    credentialsDir: config.credentialsDir,
    writeBack: config.credentialsWriteBack,
    oauthClientId: config.oauthClientId,
    oauthClientSecret: config.oauthClientSecret,
    projectId: config.projectId,
    codeAssistEndpoint: config.codeAssistEndpoint,
    apiKey: config.geminiApiKey,
    geminiApiEndpoint: config.geminiApiEndpoint,
    vertexLocation: config.vertexLocation,
    vertexEndpoint: config.vertexEndpoint,
  }
}

/** The factories' options an environment sets; unset variables leave the library's defaults. */
export function environmentOptions (config: EnvironmentConfig): EnvironmentOptions {
  const auth: Omit<AuthServiceOptions, 'store'> = {
    basePath: '/v1/api',
    sessionTtlSeconds: config.authSessionTtlSeconds,
    reauthSeconds: config.authReauthSeconds,
    queryTokens: config.authQueryTokens,
    proxyMinAccessLevel: config.proxyMinAccessLevel,
    keyDefaultDays: config.proxyKeyDefaultDays,
    signupLimits: { perAddress: config.authSignupsPerAddress, windowSeconds: config.authSignupWindowSeconds },
    publicSignup: config.authPublicSignup,
    publicLookup: config.authPublicLookup,
    adminUsername: config.authAdminUsername,
    adminPassword: config.authAdminPassword,
    limits: config.geminiLimits,
    modelAccess: config.geminiModelAccess,
  }
  const proxy: ProxyOptions = {
    // On in the gateway, off in the library (docs/upstream-protocol.md, "Model discovery").
    modelDiscovery: config.modelDiscoveryHours === 0 ? false : { intervalMs: Math.max(1, Math.round(config.modelDiscoveryHours * 3600_000)) },
    password: config.proxyPassword,
    resources: { byLevel: config.geminiLimits, maxCacheTtlSeconds: config.geminiMaxCacheTtlSeconds, uploadBytesPerDay: config.geminiUploadBytesPerDay },
    modelAccess: config.geminiModelAccess,
    modelAliases: config.geminiModelAliases,
    minAccessLevel: config.proxyMinAccessLevel,
    upstream: upstreamOptions(config),
    models: config.geminiModels,
    modelsFile: config.geminiModelsFile,
    pricesFile: config.geminiPricesFile,
    imageFetch: { allowPrivateNetworks: config.imageFetchAllowPrivateNetworks, allowedPorts: config.imageFetchAllowedPorts },
    responses: {
      secret: config.responsesSecret,
      ttlDays: config.responsesTtlDays,
      websocket: { idleTimeoutSeconds: config.responsesWebsocketIdleSeconds, maxLifetimeSeconds: config.responsesWebsocketLifetimeSeconds, maxSocketsPerKey: config.responsesWebsocketSocketsPerKey },
    },
  }
  return {
    auth,
    proxy,
    limits: config.geminiLimits,
    console: config.consoleEnabled ? { path: config.consolePath, allowHttp: config.consoleAllowHttp } : undefined,
    embeddedStore: { file: config.authDataFile },
    mongodb: config.mongodbUrl === undefined ? undefined : { url: config.mongodbUrl, dbName: config.mongodbDb },
  }
}
