import t from 'tap'
import { fail } from '../../lib/index.ts'
import { mapFinishReason, toChatCompletion, toUsage } from '../../lib/proxy/chat/response-from-gemini.ts'
import { chatCompletionStream } from '../../lib/proxy/chat/stream.ts'
import { KEEPALIVE, eventStream, sseBody } from '../../lib/proxy/routes-stream.ts'
import type { SseTranslator } from '../../lib/proxy/routes-stream.ts'
import { nativeEventStream } from '../../lib/proxy/native/stream.ts'
import { thoughtSignatureOf } from '../../lib/proxy/tool-call-ids.ts'

const META = { id: 'chatcmpl-test', created: 1700000000, model: 'gemini-2.5-pro-search' }

function candidate (parts: unknown[], finishReason?: string, index = 0): Record<string, unknown> {
  return { content: { role: 'model', parts }, index, ...(finishReason === undefined ? {} : { finishReason }) }
}

t.test('a non-streamed answer: chatcmpl id, requested model, text joined with "", thoughts as reasoning_content, usage', async t => {
  const completion = toChatCompletion({
    candidates: [candidate([{ text: 'thinking...', thought: true }, { text: 'Hello' }, { text: ', world' }], 'STOP')],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 3, totalTokenCount: 18, cachedContentTokenCount: 4 },
  }, META)
  t.same(completion, {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1700000000,
    model: 'gemini-2.5-pro-search',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello, world', reasoning_content: 'thinking...', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 8, total_tokens: 18, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 3 } },
  })
})

t.test('function calls become tool_calls with content null and finish_reason tool_calls; signatures ride in the id', async t => {
  const completion = toChatCompletion({
    candidates: [candidate([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJl' }, { functionCall: { name: 'noop' } }], 'STOP')],
  }, META)
  const message = completion.choices[0].message
  t.equal(message.content, null)
  t.equal(completion.choices[0].finish_reason, 'tool_calls')
  t.match(message.tool_calls, [
    { id: /^call_/, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    { id: /^call_/, type: 'function', function: { name: 'noop', arguments: '{}' } },
  ])
  t.equal(thoughtSignatureOf(message.tool_calls![0].id), 'c2lnbmF0dXJl')
  t.equal(thoughtSignatureOf(message.tool_calls![1].id), undefined)
  t.not(message.tool_calls![0].id, message.tool_calls![1].id)
  t.notOk('usage' in completion, 'no usage when the upstream sent none')
})

t.test('generated images become Markdown data URLs; other inline data is left out', async t => {
  const completion = toChatCompletion({
    candidates: [candidate([{ text: 'Here: ' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }, { inlineData: { mimeType: 'audio/wav', data: 'BBBB' } }], 'STOP')],
  }, META)
  t.equal(completion.choices[0].message.content, 'Here: ![image](data:image/png;base64,AAAA)')
})

t.test('a blocked prompt gives one empty choice with finish_reason content_filter', async t => {
  const completion = toChatCompletion({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } }, META)
  t.same(completion.choices, [{ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' }])
  t.equal(completion.usage?.total_tokens, 3)
})

t.test('several candidates become several choices with their own index', async t => {
  const completion = toChatCompletion({ candidates: [candidate([{ text: 'a' }], 'STOP', 0), candidate([{ text: 'b' }], 'MAX_TOKENS', 1)] }, META)
  t.same(completion.choices.map(c => [c.index, c.message.content, c.finish_reason]), [[0, 'a', 'stop'], [1, 'b', 'length']])
})

t.test('finish reasons map per the table', async t => {
  const table: Array<[string | undefined, boolean, boolean, string | null]> = [
    ['STOP', false, false, 'stop'],
    ['STOP', true, false, 'tool_calls'],
    ['MAX_TOKENS', false, false, 'length'],
    ['SAFETY', false, false, 'content_filter'],
    ['RECITATION', false, false, 'content_filter'],
    ['BLOCKLIST', false, false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, false, 'content_filter'],
    ['SPII', false, false, 'content_filter'],
    ['IMAGE_SAFETY', false, false, 'content_filter'],
    ['LANGUAGE', false, false, 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', false, false, 'stop'],
    ['UNEXPECTED_TOOL_CALL', false, false, 'stop'],
    ['OTHER', false, false, null],
    ['FINISH_REASON_UNSPECIFIED', false, false, null],
    [undefined, false, false, null],
    ['OTHER', false, true, 'stop'],
    [undefined, true, true, 'tool_calls'],
  ]
  for (const [reason, tools, final, expected] of table) {
    t.equal(mapFinishReason(reason, tools, final), expected, `${reason} tools=${tools} final=${final}`)
  }
})

t.test('usage sums completion and thought tokens and falls back to a computed total', async t => {
  t.same(toUsage({ promptTokenCount: 2, candidatesTokenCount: 3 }), {
    prompt_tokens: 2, completion_tokens: 3, total_tokens: 5, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 },
  })
  t.equal(toUsage(undefined), undefined)
})

async function * events (list: unknown[], failWith?: Error): AsyncGenerator<Record<string, any>> {
  for (const e of list) yield e as Record<string, any>
  if (failWith !== undefined) throw failWith
}

async function collect (source: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = []
  for await (const chunk of source) out.push(chunk)
  return out
}

/**
 * A fake clock for setTimeout (setImmediate stays real): `advance(ms)` moves it in 1 ms steps, letting promises
 * and immediates run between steps as they would while the time passes.
 */
async function fakeTimeouts (t: { teardown (fn: () => unknown): void }): Promise<{ advance (ms: number): Promise<void> }> {
  const { mock } = await import('node:test')
  mock.timers.enable({ apis: ['setTimeout'] })
  t.teardown(() => mock.timers.reset())
  const settle = (): Promise<void> => new Promise(resolve => setImmediate(resolve))
  return {
    async advance (ms) {
      for (let i = 0; i < ms; i++) {
        await settle()
        mock.timers.tick(1)
      }
      await settle()
    },
  }
}
function parse (frames: string[]): Array<Record<string, any> | '[DONE]'> {
  return frames.map(f => {
    t.match(f, /^data: .*\n\n$/s, 'every frame is one SSE data event')
    const data = f.slice('data: '.length).trim()
    return data === '[DONE]' ? '[DONE]' : JSON.parse(data)
  })
}

const errorBody = (err: unknown): unknown => ({ error: { message: (err as Error).message, type: 'api_error', code: 502, param: null } })

t.test('a stream starts with the role, keeps id and created fixed, separates reasoning, skips empty events, ends with [DONE]', async t => {
  const frames = parse(await collect(chatCompletionStream(events([
    { candidates: [candidate([{ text: 'hmm', thought: true }])] },
    { usageMetadata: { promptTokenCount: 1 } },
    { candidates: [candidate([{ text: 'Hel' }])] },
    { candidates: [candidate([{ text: 'lo' }], 'STOP')], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2, totalTokenCount: 3 } },
  ]), { ...META, includeUsage: false, errorBody })))
  t.equal(frames.at(-1), '[DONE]')
  const chunks = frames.slice(0, -1) as Array<Record<string, any>>
  t.same(chunks.map(c => c.choices[0].delta), [{ role: 'assistant', content: '' }, { reasoning_content: 'hmm' }, { content: 'Hel' }, { content: 'lo' }])
  t.same(chunks.map(c => c.choices[0].finish_reason), [null, null, null, 'stop'])
  t.ok(chunks.every(c => c.id === 'chatcmpl-test' && c.created === 1700000000 && c.object === 'chat.completion.chunk' && c.model === META.model))
  t.ok(chunks.every(c => c.choices.length > 0), 'no empty-choices chunk')
  t.ok(chunks.every(c => !('usage' in c)), 'no usage field without include_usage')
})

t.test('include_usage: usage null on every chunk and one extra usage chunk before [DONE]', async t => {
  const frames = parse(await collect(chatCompletionStream(events([
    { candidates: [candidate([{ text: 'x' }], 'STOP')], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 1, totalTokenCount: 5 } },
  ]), { ...META, includeUsage: true, errorBody })))
  const [first, second, usage, done] = frames as any[]
  t.equal(first.usage, null)
  t.equal(second.usage, null)
  t.same(usage.choices, [])
  t.same(usage.usage, { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } })
  t.equal(done, '[DONE]')
})

t.test('streamed tool calls: complete arguments in one delta, indexes counting up, finish_reason tool_calls', async t => {
  const frames = parse(await collect(chatCompletionStream(events([
    { candidates: [candidate([{ functionCall: { name: 'a', args: { x: 1 } } }])] },
    { candidates: [candidate([{ functionCall: { name: 'b', args: {} } }], 'STOP')] },
  ]), { ...META, includeUsage: false, errorBody }))) as any[]
  t.match(frames[1].choices[0].delta.tool_calls, [{ index: 0, id: /^call_/, type: 'function', function: { name: 'a', arguments: '{"x":1}' } }])
  t.match(frames[2].choices[0].delta.tool_calls, [{ index: 1, function: { name: 'b', arguments: '{}' } }])
  t.equal(frames[2].choices[0].finish_reason, 'tool_calls')
})

t.test('with several candidates each choice gets its role first and its own finish', async t => {
  const frames = parse(await collect(chatCompletionStream(events([
    { candidates: [candidate([{ text: 'a' }], undefined, 0), candidate([{ text: 'b' }], undefined, 1)] },
    { candidates: [candidate([{ text: '!' }], 'STOP', 0)] },
  ]), { ...META, includeUsage: false, errorBody }))) as any[]
  t.same(frames[1].choices.map((c: any) => [c.index, c.delta]), [[0, { content: 'a' }], [1, { role: 'assistant', content: 'b' }]])
  t.same(frames[3].choices, [{ index: 1, delta: {}, logprobs: null, finish_reason: 'stop' }], 'the unfinished choice is closed at the end')
})

t.test('a stream that ends without a finish reason gets stop on a last chunk', async t => {
  const frames = parse(await collect(chatCompletionStream(events([{ candidates: [candidate([{ text: 'x' }])] }]), { ...META, includeUsage: false, errorBody }))) as any[]
  t.same(frames.at(-2).choices, [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }])
})

t.test('a mid-stream failure is an error event then [DONE], never a made-up stop', async t => {
  const frames = parse(await collect(chatCompletionStream(events([{ candidates: [candidate([{ text: 'par' }])] }], fail('UPSTREAM_ERROR', 'connection dropped')), { ...META, includeUsage: true, errorBody }))) as any[]
  t.same(frames.at(-2), { error: { message: 'connection dropped', type: 'api_error', code: 502, param: null } })
  t.equal(frames.at(-1), '[DONE]')
  t.notOk(frames.some(f => f !== '[DONE]' && f.choices?.some((c: any) => c.finish_reason !== null)), 'no finish_reason anywhere')
})

t.test('native streams re-emit each event as data lines and end an upstream failure with an error event', async t => {
  const frames = await collect(nativeEventStream(events([{ candidates: [], responseId: 'r1' }], fail('UPSTREAM_ERROR')), () => ({ error: { code: 502, message: 'x', status: 'UNAVAILABLE' } })))
  t.same(frames, ['data: {"candidates":[],"responseId":"r1"}\n\n', 'data: {"error":{"code":502,"message":"x","status":"UNAVAILABLE"}}\n\n'])
})

t.test('keep-alive comments fill silences longer than the interval, and stop with the stream', async t => {
  async function * slow (): AsyncGenerator<string> {
    yield 'a'
    await new Promise(resolve => setTimeout(resolve, 130))
    yield 'b'
  }
  // Real time: eventStream re-arms its keep-alive with timer.refresh() inside the timer's own callback, which
  // node:test's fake timers do not re-schedule.
  const out = await collect(eventStream(slow(), { keepAliveMs: 40 }))
  t.equal(out[0], 'a')
  t.equal(out.at(-1), 'b')
  const beats = out.filter(c => c === KEEPALIVE).length
  t.ok(beats >= 2 && beats <= 3, `2–3 keep-alives in 130 ms at 40 ms (got ${beats})`)
  t.same(await collect(eventStream(events([]) as unknown as AsyncIterable<string>, { keepAliveMs: 40 })), [], 'an empty stream stays empty')
})

t.test('chunks that arrive within one turn of the event loop go out together, later ones on their own', async t => {
  const clock = await fakeTimeouts(t)
  async function * source (): AsyncGenerator<string> {
    yield 'a'
    yield 'b'
    await new Promise(resolve => setTimeout(resolve, 20))
    yield 'c'
    yield 'd'
  }
  const collecting = collect(eventStream(source(), { keepAliveMs: 1000 }))
  await clock.advance(20)
  t.same(await collecting, ['ab', 'cd'])
})

t.test('keep-alive: a consumer that stops early closes the source once its read in flight settles', async t => {
  const clock = await fakeTimeouts(t)
  let closed = false
  async function * source (): AsyncGenerator<string> {
    try {
      yield 'a'
      await new Promise(resolve => setTimeout(resolve, 20))
      yield 'b'
    } finally {
      closed = true
    }
  }
  for await (const chunk of eventStream(source(), { keepAliveMs: 1000 })) {
    t.equal(chunk, 'a')
    break
  }
  // The source's read in flight (in the gateway, an upstream read that the stop aborts) settles first.
  await clock.advance(20)
  t.ok(closed, 'the source ran its finally block')
})

t.test('a source that answers within every turn still has its chunks sent turn by turn, not held to its end', async t => {
  async function * quick (): AsyncGenerator<string> {
    for (let i = 0; i < 200; i++) {
      await new Promise(resolve => setImmediate(resolve))
      yield 'x'
    }
  }
  const out = await collect(eventStream(quick(), { keepAliveMs: 1000 }))
  t.equal(out.join(''), 'x'.repeat(200), 'every chunk, in order')
  t.ok(out.length > 20, `sent as it came (${out.length} writes), not as one`)
})

t.test('a source that fails still has what it gave before sent first', async t => {
  async function * failing (): AsyncGenerator<string> {
    yield 'a'
    throw new Error('source broke')
  }
  const out: string[] = []
  const err = await (async () => { for await (const chunk of eventStream(failing(), { keepAliveMs: 1000 })) out.push(chunk) })().catch(e => e)
  t.same(out, ['a'])
  t.equal(err.message, 'source broke')
})

/** A translator that names what it was given. */
function namingTranslator (onEvents: (batch: unknown[]) => string): SseTranslator {
  return { head: 'head;', events: onEvents, end: () => 'end;', error: err => `error ${(err as Error).message};` }
}

t.test('a stream from a backend other than the built-in ones is translated event by event, between the head and the end', async t => {
  async function * custom (): AsyncGenerator<Record<string, unknown>> {
    yield { n: 1 }
    yield { n: 2 }
  }
  const out = await collect(sseBody(custom(), namingTranslator(batch => batch.map(e => `e${(e as { n: number }).n};`).join('')), { keepAliveMs: 1000 }))
  t.equal(out.join(''), 'head;e1;e2;end;')
})

t.test('the first read takes what waits at once (the head), without waiting for the end of the turn', async t => {
  let stopped = false
  // An upstream that has sent its headers and nothing else yet.
  async function * quiet (): AsyncGenerator<Record<string, unknown>> {
    yield await new Promise<Record<string, unknown>>(() => {})
  }
  const body = sseBody(quiet(), namingTranslator(() => 'e;'), { keepAliveMs: 1000, onStop: () => { stopped = true } })
  let first: IteratorResult<string> | undefined
  void body.next().then(r => { first = r })
  // Only microtasks and process.nextTick callbacks run before this resolves: no turn of the event loop ends.
  await new Promise(resolve => process.nextTick(resolve))
  t.same(first, { value: 'head;', done: false })
  await body.return?.()
  t.ok(stopped, 'stopping early still cancels the source')
})

t.test('once the source is done, the rest and the end are read at once: the host ends the response in the same write', async t => {
  async function * whole (): AsyncGenerator<Record<string, unknown>> {
    yield { n: 1 }
  }
  // Armed before the body's own end-of-turn flush, so it runs first if a read waits for the end of the turn.
  let turnEnded = false
  setImmediate(() => { turnEnded = true })
  const body = sseBody(whole(), namingTranslator(() => 'e;'), { keepAliveMs: 1000 })
  t.same(await body.next(), { value: 'head;', done: false })
  // The whole stream comes before the host's next read (back to back, the common case), within this turn.
  for (let i = 0; i < 20; i++) await Promise.resolve()
  t.same(await body.next(), { value: 'e;end;', done: false })
  t.same(await body.next(), { value: undefined, done: true })
  t.equal(turnEnded, false, 'neither read waited for the end of the turn')
})

t.test('a translation that throws ends the stream with the route\'s error event, as an upstream failure does', async t => {
  async function * custom (): AsyncGenerator<Record<string, unknown>> {
    yield { n: 1 }
    yield { n: 2 }
    yield { n: 3 }
  }
  const translator = namingTranslator(batch => {
    if ((batch[0] as { n: number }).n === 2) throw new Error('bad event')
    return 'e1;'
  })
  const out = await collect(sseBody(custom(), translator, { keepAliveMs: 1000 }))
  t.equal(out.join(''), 'head;e1;error bad event;')
})

t.test('a client that reads nothing pauses the source once 64 KiB wait, and resumes it when it reads', async t => {
  let pulled = 0
  async function * big (): AsyncGenerator<string> {
    for (let i = 0; i < 10; i++) {
      pulled++
      yield 'x'.repeat(40 * 1024)
    }
  }
  const body = eventStream(big(), { keepAliveMs: 1000 })
  for (let i = 0; i < 20; i++) await new Promise(resolve => setImmediate(resolve))
  t.equal(pulled, 2, 'paused at the second chunk (80 KiB waiting)')
  const first = await body.next()
  t.equal(first.value?.length, 80 * 1024, 'what waited goes out as one chunk')
  const rest = await collect(body)
  t.equal(rest.join('').length, 8 * 40 * 1024, 'resumed after the read, every chunk delivered')
  t.equal(pulled, 10)
})
