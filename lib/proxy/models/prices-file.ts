// Where the shipped price list sits: next to this module, as models.json does (in the built package, next to the one
// bundled module, scripts/bundle-lib.ts). Read by lib/metering/prices.ts (docs/prices.md).
import { fileURLToPath } from 'node:url'

/** The shipped price list. */
export const DEFAULT_PRICES_FILE = fileURLToPath(new URL('./prices.json', import.meta.url))
