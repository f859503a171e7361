// Opens the store the config describes: MongoDB when MONGODB_URL is set, else the embedded store
// (saved to AUTH_DATA_FILE when set, memory only otherwise). The MongoDB adapter loads its driver only when
// it is used.
import { createEmbeddedStore, createMongoStore } from '../lib/index.ts'
import type { Store } from '../lib/index.ts'
import type { GatewayConfig } from './config.ts'
import type { Logger } from './logger.ts'

export async function openStore (config: GatewayConfig, logger: Logger): Promise<Store> {
  if (config.mongodbUrl !== undefined) {
    logger.info({ db: config.mongodbDb }, 'store: MongoDB')
    return await createMongoStore({ url: config.mongodbUrl, dbName: config.mongodbDb, logger })
  }
  logger.info({ file: config.authDataFile ?? null }, config.authDataFile === undefined ? 'store: embedded, memory only' : 'store: embedded, saved to file')
  return await createEmbeddedStore({ file: config.authDataFile, logger })
}
