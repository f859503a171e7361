// Server-sent events, read side: turns an upstream byte stream into the data payload of each event.
// Follows the SSE rules that matter for Google's streams: `data:` lines are collected until a blank
// line and joined with "\n"; comments, `event:`, `id:` and `retry:` are ignored; lines end with
// LF, CRLF or CR, and a line ending may be split across two chunks.

export interface SseParser {
  /** Feed decoded text; returns the data of every event completed by it. */
  push (text: string): string[]
  /** End of stream: returns the last event if its closing blank line never came. */
  end (): string[]
  /**
   * The first line fed that is neither blank, a comment, nor a `data`, `event`, `id` or `retry` field (an HTML
   * page, a JSON document): the SSE rules ignore such lines, but a caller that knows its source sends only SSE
   * can refuse the stream. Undefined while there is none.
   */
  readonly invalidLine: string | undefined
}

export function createSseParser (): SseParser {
  let partial = ''
  let data: string[] = []
  let started = false
  // The previous chunk ended in CR: a LF at the start of the next one belongs to the same line ending.
  let afterCR = false
  let invalidLine: string | undefined

  function line (text: string, out: string[]): void {
    if (text === '') {
      if (data.length > 0) out.push(data.join('\n'))
      data = []
      return
    }
    if (text.charCodeAt(0) === 58 /* ':' comment */) return
    const colon = text.indexOf(':')
    const field = colon === -1 ? text : text.slice(0, colon)
    if (field !== 'data') {
      if (field !== 'event' && field !== 'id' && field !== 'retry') invalidLine ??= text
      return
    }
    let value = colon === -1 ? '' : text.slice(colon + 1)
    if (value.charCodeAt(0) === 32) value = value.slice(1)
    data.push(value)
  }

  return {
    get invalidLine () { return invalidLine },
    push (text) {
      const out: string[] = []
      if (text === '') return out
      if (!started) {
        started = true
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
      }
      let start = 0
      if (afterCR) {
        afterCR = false
        if (text.charCodeAt(0) === 10) start = 1
      }
      const s = partial + text.slice(start)
      partial = ''
      start = 0
      if (!s.includes('\r')) {
        // LF line ends only (what Google sends): let indexOf find them rather than a loop over every character.
        for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', start)) {
          line(s.slice(start, i), out)
          start = i + 1
        }
      } else {
        for (let i = 0; i < s.length; i++) {
          const c = s.charCodeAt(i)
          if (c !== 10 && c !== 13) continue
          line(s.slice(start, i), out)
          if (c === 13) {
            if (i + 1 === s.length) afterCR = true
            else if (s.charCodeAt(i + 1) === 10) i++
          }
          start = i + 1
        }
      }
      partial = s.slice(start)
      return out
    },
    end () {
      const out: string[] = []
      if (partial !== '') line(partial, out)
      partial = ''
      if (data.length > 0) out.push(data.join('\n'))
      data = []
      return out
    },
  }
}

/** An SseParser over UTF-8 bytes: a character split across two network reads is decoded whole. */
export function createSseDecoder (): { push: (bytes: Uint8Array) => string[], end: () => string[], readonly invalidLine: string | undefined } {
  const decoder = new TextDecoder()
  const parser = createSseParser()
  return {
    push: bytes => parser.push(decoder.decode(bytes, { stream: true })),
    end: () => [...parser.push(decoder.decode()), ...parser.end()],
    get invalidLine () { return parser.invalidLine },
  }
}
