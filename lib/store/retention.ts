// How long records outlive their end. Both adapters keep them a while so callers can still tell
// "token expired" from "invalid token"; MongoDB TTL indexes and the embedded store's sweep then drop them.
// MongoDB's TTL runs on the server's clock and the embedded sweep on the store's `now` option (default:
// the system clock), so records written under a fake clock far in the past are dropped early.

/** Seconds a session is kept after its expiresAt. */
export const SESSION_RETENTION_SECONDS = 24 * 60 * 60

/** Seconds a deleted API key's name is kept (KeyStore.names): as long as the longest usage range asked for, and a month. */
export const RETIRED_KEY_RETENTION_SECONDS = 400 * 24 * 60 * 60

/** Seconds a login-attempt window is kept after its resetAt. */
export const ATTEMPT_RETENTION_SECONDS = 60 * 60
