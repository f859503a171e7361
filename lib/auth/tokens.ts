import { hash, randomBytes } from 'node:crypto'

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

/** A session token: 256 random bits as 43 base64url characters. */
export function newToken (): string {
  return randomBytes(32).toString('base64url')
}

/** Whether a string can be a token at all; anything else is refused before a store lookup. */
export function isTokenShaped (token: string): boolean {
  return TOKEN_PATTERN.test(token)
}

/**
 * What the store keeps instead of the token: its SHA-256. A leaked store cannot be replayed, and a
 * lookup by digest compares no secret bytes (the token has 256 bits, so no salt or slow hash is needed).
 */
export function tokenDigest (token: string): string {
  // crypto.hash is the one-shot form: no Hash object per call on the validate hot path.
  return hash('sha256', token, 'hex')
}

/** A user id: 24 hex characters (96 random bits), the shape of a MongoDB ObjectId. */
export function newUserId (): string {
  return randomBytes(12).toString('hex')
}
