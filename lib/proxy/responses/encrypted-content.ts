// A reasoning item's `encrypted_content`: the Gemini thought signatures of the function calls that follow it,
// sealed with AES-256-GCM under a key derived from the gateway's secret (docs/responses.md, "Thought signatures"),
// so they round-trip through the client with no state on the gateway and a client can neither read nor forge one.
// The owner (user id, or "operator") is bound as associated data: one user's item does not open for another.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

/** The form's version; a sealed value starts with it. */
const PREFIX = 'gh1.'
const IV_BYTES = 12
const TAG_BYTES = 16

/** What a reasoning item carries: each call id's signature; a compaction item, the summary of what it replaced. */
export interface SealedSignatures {
  /** call_id → Gemini thoughtSignature (base64). */
  calls: Record<string, string>
  summary?: string
}

export interface SignatureSealer {
  seal (owner: string, content: SealedSignatures): string
  /** The signatures sealed in `value` for `owner`; undefined when it is not one of this gateway's, or was altered. */
  open (owner: string, value: string): SealedSignatures | undefined
}

/** A sealer keyed by `secret`; without one, by a random key of this process (values do not survive a restart). */
export function createSignatureSealer (secret: string | undefined): SignatureSealer {
  const ikm = secret === undefined ? randomBytes(32) : Buffer.from(secret, 'utf8')
  const key = Buffer.from(hkdfSync('sha256', ikm, 'gatehouse', 'responses encrypted_content v1', 32))
  const aad = (owner: string): Buffer => Buffer.from(`gatehouse responses reasoning\n${owner}`, 'utf8')
  return {
    seal (owner, content) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(aad(owner))
      const sealed = Buffer.concat([iv, cipher.update(JSON.stringify(content.summary === undefined ? { c: content.calls } : { c: content.calls, s: content.summary }), 'utf8'), cipher.final(), cipher.getAuthTag()])
      return PREFIX + sealed.toString('base64url')
    },
    open (owner, value) {
      if (!value.startsWith(PREFIX)) return undefined
      const bytes = Buffer.from(value.slice(PREFIX.length), 'base64url')
      if (bytes.length < IV_BYTES + TAG_BYTES) return undefined
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES))
        decipher.setAAD(aad(owner))
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
        const text = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8')
        const parsed = JSON.parse(text) as { c?: unknown, s?: unknown }
        const calls: Record<string, string> = {}
        if (parsed.c !== null && typeof parsed.c === 'object') {
          for (const [id, signature] of Object.entries(parsed.c)) if (typeof signature === 'string') calls[id] = signature
        }
        return typeof parsed.s === 'string' ? { calls, summary: parsed.s } : { calls }
      } catch {
        return undefined
      }
    },
  }
}
