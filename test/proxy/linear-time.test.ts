// No input can freeze the event loop: what the proxy does with a request before the upstream call (read the
// JSON, validate, translate) takes time linear in the request. Timed in process, through the real route
// handlers, with a backend that answers at once, so that only the proxy's own work is measured.
import t from 'tap'
import { createProxy } from '../../lib/index.ts'
import type { Backend, HandlerRequest, Route } from '../../lib/index.ts'

const PASSWORD = 'linear-time-password'

const instant: Backend = {
  generate: async () => ({ candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] }),
  stream: async () => (async function * () {})(),
  countTokens: async () => ({ totalTokens: 1 }),
  ready: async () => ({ ok: true }),
  close: async () => {},
}

function routeOf (routes: Route[], method: string, path: string): Route {
  return routes.find(r => r.method === method && r.path === path) as Route
}

/** Sends one body to a route handler; resolves with the status (errors mapped as a host would). */
async function send (route: Route, path: string, body: string): Promise<number> {
  const req: HandlerRequest = { method: 'POST', path, params: {}, query: {}, headers: { authorization: `Bearer ${PASSWORD}` }, body: Buffer.from(body) }
  try {
    return (await route.handler(req)).status
  } catch (err) {
    return route.errorResponse(err).status
  }
}

/** CPU milliseconds the main thread has used: unlike the wall clock, it does not count the time other processes of a
 * busy machine held the CPU. */
function cpuMs (): number {
  const { user, system } = process.threadCpuUsage()
  return (user + system) / 1000
}

/**
 * CPU milliseconds one call of `run` takes: calls are batched until a batch takes at least 50 ms (the thread's CPU
 * clock may tick in milliseconds), and the best of five batches counts (contention only ever adds time).
 */
async function msPerCall (run: () => Promise<unknown>): Promise<number> {
  let calls = 1
  for (;;) {
    const started = cpuMs()
    for (let i = 0; i < calls; i++) await run()
    if (cpuMs() - started >= 50 || calls >= 1 << 16) break
    calls *= 2
  }
  let best = Infinity
  for (let round = 0; round < 5; round++) {
    const started = cpuMs()
    for (let i = 0; i < calls; i++) await run()
    best = Math.min(best, (cpuMs() - started) / calls)
  }
  return best
}

const chatBody = (content: unknown, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content }], ...extra })

t.test('no client input takes super-linear time: doubling a hostile request at most doubles the time to handle it', async t => {
  const proxy = createProxy({ password: PASSWORD, backend: instant })
  t.teardown(() => proxy.close())
  const chat = routeOf(proxy.routes, 'POST', '/v1/chat/completions')
  const native = routeOf(proxy.routes, '*', '/v1beta/{path*}')
  const nativePath = '/v1beta/models/gemini-2.5-flash:generateContent'

  // Each family builds a request of size n; n is large enough that the quadratic scans these replace took a
  // second or more at 2n (the `![` one: about 2 s for the issue's 40 KB message).
  const families: Array<[string, number, (n: number) => [Route, string, string], number]> = [
    ['a chat message of repeated "![" (Markdown image scan)', 20_000, n => [chat, '/v1/chat/completions', chatBody('!['.repeat(n) + '](data:image/x')], 200],
    ['a chat message of repeated "![](data:image/"', 2_500, n => [chat, '/v1/chat/completions', chatBody('![](data:image/'.repeat(n))], 200],
    ['a chat message of image links whose URLs never end', 5_000, n => [chat, '/v1/chat/completions', chatBody('](data:image/'.repeat(n) + ')')], 200],
    ['Markdown images in text parts', 1_000, n => [chat, '/v1/chat/completions', chatBody([{ type: 'text', text: '![a](data:image/png;base64,iVBORw0KGgo=) x '.repeat(n) }])], 200],
    ['tool results of nested JSON', 2_000, n => [chat, '/v1/chat/completions', JSON.stringify({
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '['.repeat(n) } }] },
        { role: 'tool', tool_call_id: 'c1', content: '['.repeat(n) + ']'.repeat(n) },
      ],
    })], 200],
    ['a native body of escaped quotes (JSON scan)', 200_000, n => [native, nativePath, `{"contents":[{"role":"user","parts":[{"text":"${'\\"'.repeat(n)}"}]}]}`], 200],
    ['a native body nested deeper than allowed', 200_000, n => [native, nativePath, '{"contents":' + '['.repeat(n) + ']'.repeat(n) + '}'], 400],
  ]
  for (const [name, n, build, status] of families) {
    const [route, path, small] = build(n)
    const [, , large] = build(2 * n)
    t.equal(await send(route, path, small), status, `${name}: answered ${status}`)
    // Linear work gives a ratio of about 2, quadratic about 4 every time; 3 leaves room for a noisy, shared machine,
    // and a ratio past it is measured again (up to three times) before it counts: a collection landing in one
    // measurement is noise, quadratic work is not.
    let once = 0
    let twice = Infinity
    for (let attempt = 0; attempt < 3 && (attempt === 0 || twice / once >= 3); attempt++) {
      once = await msPerCall(async () => await send(route, path, small))
      twice = await msPerCall(async () => await send(route, path, large))
    }
    t.ok(twice / once < 3, `${name}: ${once.toFixed(3)} ms at ${small.length} bytes, ${twice.toFixed(3)} ms at ${large.length} bytes (ratio ${(twice / once).toFixed(2)})`)
  }
})

t.test('a request may hold at most 4096 content parts, Markdown images inside text included', async t => {
  const proxy = createProxy({ password: PASSWORD, backend: instant })
  t.teardown(() => proxy.close())
  const chat = routeOf(proxy.routes, 'POST', '/v1/chat/completions')
  const call = async (body: string): Promise<{ status: number, body?: any }> => {
    const req: HandlerRequest = { method: 'POST', path: '/v1/chat/completions', params: {}, query: {}, headers: { authorization: `Bearer ${PASSWORD}` }, body: Buffer.from(body) }
    try {
      return await chat.handler(req)
    } catch (err) {
      return chat.errorResponse(err)
    }
  }
  const parts = (n: number): unknown[] => Array.from({ length: n }, () => ({ type: 'text', text: '' }))
  const messages = (count: number, each: number): unknown[] => Array.from({ length: count }, () => ({ role: 'user', content: parts(each) }))

  t.equal((await call(JSON.stringify({ model: 'gemini-2.5-flash', messages: messages(8, 512) }))).status, 200, '4096 parts are fine')
  const tooMany = await call(JSON.stringify({ model: 'gemini-2.5-flash', messages: messages(5, 1000) }))
  t.equal(tooMany.status, 400)
  t.match(tooMany.body, { error: { type: 'invalid_request_error', param: 'messages', message: /at most 4096 content parts/ } })

  const body = JSON.stringify({ model: 'gemini-2.5-flash', messages: messages(400, 1000) })
  const started = cpuMs()
  const issue = await call(body)
  const spent = cpuMs() - started
  t.equal(issue.status, 400, 'the issue\'s 400 messages of 1,000 empty parts')
  t.ok(spent < 1000, `refused after ${spent.toFixed(0)} ms of CPU (it used to take 3 s)`)

  const images = '![a](data:image/png;base64,iVBORw0KGgo=)'.repeat(4097)
  const inText = await call(chatBody(images))
  t.equal(inText.status, 400, 'Markdown images inside text count as parts')
  t.match(inText.body, { error: { param: 'messages', message: /at most 4096 content parts/ } })

  const limited = createProxy({ password: PASSWORD, backend: instant, chatLimits: { maxTotalParts: 2 } })
  t.teardown(() => limited.close())
  const small = routeOf(limited.routes, 'POST', '/v1/chat/completions')
  const res = await small.handler({ method: 'POST', path: '/v1/chat/completions', params: {}, query: {}, headers: { authorization: `Bearer ${PASSWORD}` }, body: Buffer.from(chatBody(parts(3))) }).catch(err => small.errorResponse(err))
  t.match(res, { status: 400, body: { error: { message: /at most 2 content parts/ } } }, 'chatLimits.maxTotalParts sets it')
  t.throws(() => createProxy({ password: PASSWORD, backend: instant, chatLimits: { maxTotalParts: 0 } }), { name: 'TypeError', message: /chatLimits\.maxTotalParts/ })
})
