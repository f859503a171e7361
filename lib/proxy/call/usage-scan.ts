// The usage an answer passed through reports, read as its bytes go by (docs/model-proxy.md, "Limits and usage"):
// the body is never held; each chunk is searched natively for `"usageMetadata"` and only that object is kept and
// parsed. An SSE stream's usage is a running total (the last one counts); a JSON answer's usages add up.
import type { TokenUsage } from '../../metering/token-usage.ts'
import { readUsageMetadata } from '../gemini/hub.ts'

const MARKER = Buffer.from('"usageMetadata"')
/** Bytes kept from a chunk's end: a marker they start is completed by the next chunk. */
const KEEP = MARKER.length - 1
const OPEN = 0x7b // {
const CLOSE = 0x7d // }
/** A usageMetadata object larger than this is no usage the proxy reads (it holds a few counts and modality lists). */
const MAX_OBJECT_BYTES = 16 * 1024

export class UsageScan {
  private readonly running: boolean
  private total: TokenUsage | undefined
  /** Bytes of the object being read, from its `{`; undefined while searching for the marker. */
  private held: Buffer[] | undefined
  private heldBytes = 0
  /** Braces open in the object being read; 0 before its `{`. */
  private depth = 0
  /** The end of the last chunk, for a marker split across two. */
  private tail: Buffer | undefined

  /** `running`: the answer is an event stream whose usages are running totals. */
  constructor (running: boolean) {
    this.running = running
  }

  /** What the answer reported so far; undefined when it reported none. */
  get usage (): TokenUsage | undefined { return this.total }

  push (chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    let at = 0
    const before = this.tail
    this.tail = undefined
    if (this.held === undefined && before !== undefined) {
      // A marker split across chunks ends within the first MARKER.length - 1 bytes of this one.
      const joined = Buffer.concat([before, bytes.subarray(0, KEEP)])
      const found = joined.indexOf(MARKER)
      if (found >= 0) {
        this.held = []
        at = found + MARKER.length - before.length
      }
    }
    while (at < bytes.length) {
      if (this.held === undefined) {
        const found = bytes.indexOf(MARKER, at)
        if (found < 0) {
          // The last bytes searched, for a marker that goes on in the next chunk (chunks may be shorter than it).
          const rest = bytes.subarray(Math.max(at, bytes.length - KEEP))
          this.tail = rest.length < KEEP && at === 0 && before !== undefined
            ? Buffer.concat([before, rest]).subarray(-KEEP)
            : Buffer.from(rest)
          return
        }
        this.held = []
        at = found + MARKER.length
      }
      at = this.read(bytes, at)
    }
  }

  /** Reads the object after a marker from `at`; returns where the search goes on. */
  private read (bytes: Buffer, at: number): number {
    let start = at
    let i = at
    for (; i < bytes.length; i++) {
      const b = bytes[i]
      if (this.depth === 0) {
        if (b === OPEN) {
          this.depth = 1
          start = i
        } else if (b !== 0x20 && b !== 0x3a && b !== 0x0a && b !== 0x0d && b !== 0x09) {
          this.reset() // not an object (`"usageMetadata": null`, or text that only names it)
          return i
        }
      } else if (b === OPEN) {
        this.depth++
      } else if (b === CLOSE && --this.depth === 0) {
        const held = this.held as Buffer[]
        held.push(bytes.subarray(start, i + 1))
        this.take(Buffer.concat(held).toString('utf8'))
        this.reset()
        return i + 1
      }
    }
    if (this.depth > 0) {
      this.heldBytes += bytes.length - start
      if (this.heldBytes > MAX_OBJECT_BYTES) this.reset()
      else (this.held as Buffer[]).push(Buffer.from(bytes.subarray(start)))
    }
    return i
  }

  private take (text: string): void {
    let read: TokenUsage | undefined
    try {
      read = readUsageMetadata(JSON.parse(text))
    } catch {
      return
    }
    if (read === undefined) return
    if (this.running || this.total === undefined) this.total = read
    else {
      const t = this.total
      this.total = { inputTokens: t.inputTokens + read.inputTokens, outputTokens: t.outputTokens + read.outputTokens, thinkingTokens: t.thinkingTokens + read.thinkingTokens, cachedTokens: t.cachedTokens + read.cachedTokens }
    }
  }

  private reset (): void {
    this.held = undefined
    this.heldBytes = 0
    this.depth = 0
  }
}
