// Opens the store the config describes: MongoDB when MONGODB_URL is set, else the embedded store
// (saved to AUTH_DATA_FILE when set, memory only otherwise). Adapters load on demand, so the MongoDB
// driver is only loaded when it is used.
import type { Store } from '../lib/store/types.ts'
import type { GatewayConfig } from './config.ts'
import type { Logger } from './logger.ts'

export async function openStore (config: GatewayConfig, logger: Logger): Promise<Store> {
  if (config.mongodbUrl !== undefined) {
    const { createMongoStore } = await import('../lib/store/mongo-store.ts')
    logger.info({ db: config.mongodbDb }, 'store: MongoDB')
    return await createMongoStore({ url: config.mongodbUrl, dbName: config.mongodbDb, logger })
  }
  const { createEmbeddedStore } = await import('../lib/store/embedded-store.ts')
  logger.info({ file: config.authDataFile ?? null }, config.authDataFile === undefined ? 'store: embedded, memory only' : 'store: embedded, saved to file')
  return await createEmbeddedStore({ file: config.authDataFile, logger })
}
