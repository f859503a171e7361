/** The pino-compatible logger every part of the library takes; each method takes an object and/or a message. */
export interface Logger {
  debug (obj: unknown, msg?: string): void
  info (obj: unknown, msg?: string): void
  warn (obj: unknown, msg?: string): void
  error (obj: unknown, msg?: string): void
}

/** The logger used when none is given. */
export const SILENT_LOGGER: Logger = {
  debug () {},
  info () {},
  warn () {},
  error () {}
}
