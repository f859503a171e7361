import t from 'tap'
import { createSseDecoder, createSseParser } from '../../lib/proxy/upstream/sse.ts'

function parseAll (chunks: string[]): string[] {
  const parser = createSseParser()
  const out: string[] = []
  for (const c of chunks) out.push(...parser.push(c))
  out.push(...parser.end())
  return out
}

t.test('an SSE stream is split into the data of its events', async t => {
  const cases: Array<{ name: string, chunks: string[], events: string[] }> = [
    { name: 'one event per blank line', chunks: ['data: {"a":1}\n\ndata: {"b":2}\n\n'], events: ['{"a":1}', '{"b":2}'] },
    { name: 'multi-line data is joined with a newline', chunks: ['data: {"a":\ndata: 1}\n\n'], events: ['{"a":\n1}'] },
    { name: 'CRLF line endings', chunks: ['data: x\r\ndata: y\r\n\r\ndata: z\r\n\r\n'], events: ['x\ny', 'z'] },
    { name: 'CR-only line endings', chunks: ['data: x\r\rdata: y\r\r'], events: ['x', 'y'] },
    { name: 'comments, event, id and retry fields are ignored', chunks: [': keepalive\nevent: message\nid: 7\nretry: 10\ndata: x\n\n: ping\n\n'], events: ['x'] },
    { name: 'an event split across chunks', chunks: ['da', 'ta: {"te', 'xt":"hi"}', '\n', '\n'], events: ['{"text":"hi"}'] },
    { name: 'a CRLF split between chunks is one line ending', chunks: ['data: a\r', '\n\r', '\ndata: b\r\n\r\n'], events: ['a', 'b'] },
    { name: 'no space after the colon', chunks: ['data:x\n\n'], events: ['x'] },
    { name: 'only the first space after the colon is dropped', chunks: ['data:  x\n\n'], events: [' x'] },
    { name: 'a field with no colon counts as an empty data line', chunks: ['data\ndata: x\n\n'], events: ['\nx'] },
    { name: 'blank lines without data dispatch nothing', chunks: ['\n\n\n: only a comment\n\n'], events: [] },
    { name: 'a last event without its blank line is still delivered', chunks: ['data: {"last":true}'], events: ['{"last":true}'] },
    { name: 'a byte-order mark at the start is skipped', chunks: ['\ufeffdata: x\n\n'], events: ['x'] },
  ]
  for (const c of cases) t.same(parseAll(c.chunks), c.events, c.name)
})

t.test('a UTF-8 character split across byte chunks is decoded whole', async t => {
  const bytes = Buffer.from('data: {"t":"héllo 👋"}\n\n', 'utf8')
  const split = bytes.indexOf(0xf0) + 2
  const decoder = createSseDecoder()
  const events = [bytes.subarray(0, 9), bytes.subarray(9, split), bytes.subarray(split)].flatMap(chunk => decoder.push(chunk))
  t.same([...events, ...decoder.end()].map(e => JSON.parse(e)), [{ t: 'héllo 👋' }])
})

t.test('the first line that is no SSE field is kept, for callers that refuse anything but SSE', async t => {
  const cases: Array<[string, string[], string | undefined]> = [
    ['SSE fields and comments only', [': c\nevent: e\nid: 1\nretry: 5\ndata: x\n\n'], undefined],
    ['an HTML page', ['<!DOCTYPE html>\n<html>\n'], '<!DOCTYPE html>'],
    ['a line with a colon but an unknown field', ['data: x\n\n<a href="http://x">\n'], '<a href="http://x">'],
    ['a last line without its line end', ['data: x\n\noops'], 'oops'],
  ]
  for (const [name, chunks, invalid] of cases) {
    const decoder = createSseDecoder()
    for (const c of chunks) decoder.push(Buffer.from(c))
    decoder.end()
    t.equal(decoder.invalidLine, invalid, name)
  }
})
