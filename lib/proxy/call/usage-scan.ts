// The usage an answer passed through reports, read as its bytes go by (docs/model-proxy.md, "Limits and usage"):
// the body is never held; each chunk is searched natively for `"usageMetadata"` and `"webSearchQueries"`, and only
// the value after each is kept and parsed. An SSE stream's usage is a running total (the last one counts) and it
// repeats its grounding (the largest count of its events is the call's); a JSON answer's usages and queries add up.
import type { TokenUsage } from '../../metering/token-usage.ts'
import { readUsageMetadata, searchQueryCount } from '../gemini/hub.ts'

const OPEN_BRACE = 0x7b // {
const CLOSE_BRACE = 0x7d // }
const OPEN_BRACKET = 0x5b // [
const CLOSE_BRACKET = 0x5d // ]
const QUOTE = 0x22
const BACKSLASH = 0x5c
const NEWLINE = 0x0a
/** A value larger than this is no usage or query list the proxy reads (they hold a few counts, a few queries). */
const MAX_VALUE_BYTES = 16 * 1024

/** Bytes between a key and its value: spaces, the colon, line ends, tabs. */
const between = (b: number): boolean => b === 0x20 || b === 0x3a || b === 0x0a || b === 0x0d || b === 0x09

/**
 * The JSON objects (or arrays) that follow one key in a byte stream, each handed to `take` as text, with `lines`
 * whether a line ended since the previous one (an SSE event's end); brackets inside strings do not count.
 */
class KeyedValues {
  private readonly open: number
  private readonly close: number
  private readonly lines: boolean
  private readonly take: (text: string, lineEnded: boolean) => void
  private readonly marker: Buffer
  /** Bytes kept from a chunk's end: a marker they start is completed by the next chunk. */
  private readonly keep: number
  /** Bytes of the value being read, from its opening bracket; undefined while searching for the marker. */
  private held: Buffer[] | undefined
  private heldBytes = 0
  /** Brackets open in the value being read; 0 before its first. */
  private depth = 0
  private inString = false
  private escaped = false
  /** The end of the last chunk, for a marker split across two. */
  private tail: Buffer | undefined
  private lineEnded = false

  constructor (key: string, open: number, close: number, lines: boolean, take: (text: string, lineEnded: boolean) => void) {
    this.open = open
    this.close = close
    this.lines = lines
    this.take = take
    this.marker = Buffer.from(`"${key}"`)
    this.keep = this.marker.length - 1
  }

  push (bytes: Buffer): void {
    let at = 0
    const before = this.tail
    this.tail = undefined
    if (this.held === undefined && before !== undefined) {
      // A marker split across chunks ends within the first `keep` bytes of this one.
      const found = Buffer.concat([before, bytes.subarray(0, this.keep)]).indexOf(this.marker)
      if (found >= 0) {
        this.held = []
        at = found + this.marker.length - before.length
      }
    }
    while (at < bytes.length) {
      if (this.held === undefined) {
        const found = bytes.indexOf(this.marker, at)
        this.seeLines(bytes, at, found < 0 ? bytes.length : found)
        if (found < 0) {
          this.keepTail(bytes, at, before)
          return
        }
        this.held = []
        at = found + this.marker.length
      }
      at = this.read(bytes, at)
    }
  }

  /** Notes a line end in the bytes searched from `at` to `end`. */
  private seeLines (bytes: Buffer, at: number, end: number): void {
    if (!this.lines || this.lineEnded) return
    const newline = bytes.indexOf(NEWLINE, at)
    if (newline >= 0 && newline < end) this.lineEnded = true
  }

  /** The last bytes searched, for a marker that goes on in the next chunk (chunks may be shorter than it). */
  private keepTail (bytes: Buffer, at: number, before: Buffer | undefined): void {
    const rest = bytes.subarray(Math.max(at, bytes.length - this.keep))
    this.tail = rest.length < this.keep && at === 0 && before !== undefined
      ? Buffer.concat([before, rest]).subarray(-this.keep)
      : Buffer.from(rest)
  }

  /** Reads the value after a marker from `at`; returns where the search goes on. */
  private read (bytes: Buffer, at: number): number {
    let start = at
    let i = at
    for (; i < bytes.length; i++) {
      const b = bytes[i]
      if (this.depth === 0) {
        if (b === this.open) {
          this.depth = 1
          start = i
        } else if (!between(b)) {
          this.reset() // not that value (`"usageMetadata": null`, or a string that only names it)
          return i
        }
      } else if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (b === BACKSLASH) this.escaped = true
        else if (b === QUOTE) this.inString = false
      } else if (b === QUOTE) {
        this.inString = true
      } else if (b === this.open) {
        this.depth++
      } else if (b === this.close && --this.depth === 0) {
        const held = this.held as Buffer[]
        held.push(bytes.subarray(start, i + 1))
        const lineEnded = this.lineEnded
        this.lineEnded = false
        this.reset()
        this.take(Buffer.concat(held).toString('utf8'), lineEnded)
        return i + 1
      }
    }
    if (this.depth > 0) {
      this.heldBytes += bytes.length - start
      if (this.heldBytes > MAX_VALUE_BYTES) this.reset()
      else (this.held as Buffer[]).push(Buffer.from(bytes.subarray(start)))
    }
    return i
  }

  private reset (): void {
    this.held = undefined
    this.heldBytes = 0
    this.depth = 0
    this.inString = false
    this.escaped = false
  }
}

/** JSON text parsed, or undefined for text that is none. */
function parsed (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export class UsageScan {
  private readonly running: boolean
  private total: TokenUsage | undefined
  /** The call's search queries: a stream's largest event count, a JSON answer's sum. */
  private queries = 0
  /** The queries of the stream event (SSE line) being read. */
  private eventQueries = 0
  private readonly usages: KeyedValues
  private readonly queryLists: KeyedValues

  /** `running`: the answer is an event stream whose usages are running totals. */
  constructor (running: boolean) {
    this.running = running
    this.usages = new KeyedValues('usageMetadata', OPEN_BRACE, CLOSE_BRACE, false, text => this.takeUsage(text))
    this.queryLists = new KeyedValues('webSearchQueries', OPEN_BRACKET, CLOSE_BRACKET, running, (text, lineEnded) => this.takeQueries(text, lineEnded))
  }

  /** What the answer reported so far, its search queries included (as usageOf reads them); undefined when it reported none. */
  get usage (): TokenUsage | undefined {
    const t = this.total
    return t === undefined || this.queries === 0 ? t : { ...t, searchQueries: this.queries }
  }

  push (chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    this.usages.push(bytes)
    this.queryLists.push(bytes)
  }

  private takeUsage (text: string): void {
    const read = readUsageMetadata(parsed(text))
    if (read === undefined) return
    if (this.running || this.total === undefined) this.total = read
    else {
      const t = this.total
      this.total = { inputTokens: t.inputTokens + read.inputTokens, outputTokens: t.outputTokens + read.outputTokens, thinkingTokens: t.thinkingTokens + read.thinkingTokens, cachedTokens: t.cachedTokens + read.cachedTokens }
      const toolUse = (t.toolUseTokens ?? 0) + (read.toolUseTokens ?? 0)
      if (toolUse > 0) this.total.toolUseTokens = toolUse
    }
  }

  private takeQueries (text: string, lineEnded: boolean): void {
    const n = searchQueryCount(parsed(text))
    if (!this.running) {
      this.queries += n
      return
    }
    // Each SSE event is one `data:` line: its candidates' queries add up, the largest event counts.
    if (lineEnded) this.eventQueries = 0
    this.eventQueries += n
    this.queries = Math.max(this.queries, this.eventQueries)
  }
}
