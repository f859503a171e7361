/** pino-compatible logger the store adapters take; every method takes an object and/or a message. */
export interface StoreLogger {
  debug (obj: unknown, msg?: string): void
  info (obj: unknown, msg?: string): void
  warn (obj: unknown, msg?: string): void
  error (obj: unknown, msg?: string): void
}
