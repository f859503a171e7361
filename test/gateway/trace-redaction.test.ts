// The tracer wrapper every instrumentation uses (gateway/tracing.ts), against a recording tracer: what each span
// method hands on. tracing.test.ts checks the exported spans of a real gateway.
import t from 'tap'
import { context, trace, ROOT_CONTEXT } from '@opentelemetry/api'
import type { Context, ContextManager, Span, SpanOptions, Tracer } from '@opentelemetry/api'
import { redactAttribute, redactingTracerProvider } from '../../gateway/trace-redaction.ts'
import { REDACTED } from '../../gateway/logger.ts'

interface Recorded { name: string, options: SpanOptions, calls: Array<[string, ...unknown[]]> }

function recordingProvider (): { provider: Parameters<typeof redactingTracerProvider>[0], spans: Recorded[] } {
  const spans: Recorded[] = []
  const tracer = {
    startSpan (name: string, options: SpanOptions = {}) {
      const rec: Recorded = { name, options, calls: [] }
      spans.push(rec)
      const span = trace.wrapSpanContext({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: 1 })
      return new Proxy(span, {
        get (target, prop) {
          if (prop === 'spanContext' || prop === 'isRecording') return (target as any)[prop].bind(target)
          return (...args: unknown[]) => { rec.calls.push([String(prop), ...args]) }
        },
      })
    },
  } as unknown as Tracer
  return { provider: { getTracer: () => tracer }, spans }
}

t.test('span redaction: query values, secret headers, names, events, links, exceptions and status messages', async t => {
  const { provider, spans } = recordingProvider()
  const tracer = redactingTracerProvider(provider).getTracer('test')
  const span = tracer.startSpan('GET /p?token=name-secret', {
    attributes: { 'url.query': 'a=1&tok%65n=q-secret', 'url.full': 'https://u:pw-secret@h/p?key=k-secret&b=2', 'http.response.status_code': 200 },
    links: [{ context: trace.wrapSpanContext({ traceId: '3'.repeat(32), spanId: '4'.repeat(16), traceFlags: 1 }).spanContext(), attributes: { 'url.full': '/x?password=link-secret' } }],
  })
  span.setAttribute('http.request.header.authorization', ['Bearer h-secret'])
  span.setAttribute('http.request.header.x-goog-api-key', 'g-secret')
  span.setAttribute('http.request.header.token', ['t-secret'])
  span.setAttribute('http.request.header.accept', ['application/json'])
  span.setAttributes({ 'url.query': '?access_token=at-secret', 'list': ['/a?key=l-secret', 3] as any, 'n': 1 })
  span.addEvent('fetched /img?token=e-secret', { 'url.full': '/img?token=ea-secret' })
  span.addEvent('at a time', [1, 2])
  span.addLink({ context: span.spanContext(), attributes: { note: '?key=al-secret' } })
  span.addLinks([{ context: span.spanContext() }])
  span.recordException(Object.assign(new Error('GET /x?key=x-secret failed'), { code: 'E_X' }))
  span.recordException('plain Bearer s-secret')
  span.recordException({ name: 'Only' })
  span.setStatus({ code: 2, message: 'failed at /x?token=st-secret' })
  span.setStatus({ code: 1 })
  span.updateName('POST /y?key=n2-secret')
  t.equal(span.isRecording(), false, 'the wrapped span answers as the real one')
  span.end()

  const all = JSON.stringify(spans)
  t.notMatch(all, /-secret/, 'no secret value reached the real span')
  const [rec] = spans
  t.equal(rec.name, `GET /p?token=${REDACTED}`)
  t.same(rec.options.attributes, { 'url.query': `a=1&tok%65n=${REDACTED}`, 'url.full': `https://u:${REDACTED}@h/p?key=${REDACTED}&b=2`, 'http.response.status_code': 200 })
  t.same(rec.calls.slice(0, 4), [
    ['setAttribute', 'http.request.header.authorization', [REDACTED]],
    ['setAttribute', 'http.request.header.x-goog-api-key', REDACTED],
    ['setAttribute', 'http.request.header.token', [REDACTED]],
    ['setAttribute', 'http.request.header.accept', ['application/json']],
  ], 'header attributes with a secret name lose their value')
  t.match(rec.calls.find(c => c[0] === 'recordException'), ['recordException', { code: 'E_X', name: 'Error', message: `GET /x?key=${REDACTED} failed`, stack: /key=\[redacted\]/ }])
  t.same(rec.calls.find(c => c[0] === 'setStatus'), ['setStatus', { code: 2, message: `failed at /x?token=${REDACTED}` }])
  t.same(rec.calls.filter(c => c[0] === 'addEvent').map(c => c.slice(1, 3)), [[`fetched /img?token=${REDACTED}`, { 'url.full': `/img?token=${REDACTED}` }], ['at a time', [1, 2]]])
  t.same(rec.calls.at(-1), ['end', undefined])
})

t.test('startActiveSpan runs the callback with the redacting span active, in all three forms', async t => {
  // A synchronous context manager, enough to see which span is active inside the callback.
  let current: Context = ROOT_CONTEXT
  const manager: ContextManager = {
    active: () => current,
    with (ctx, fn, thisArg, ...args) {
      const previous = current
      current = ctx
      try { return fn.call(thisArg, ...args) } finally { current = previous }
    },
    bind: (_ctx, target) => target,
    enable () { return this },
    disable () { return this },
  }
  context.setGlobalContextManager(manager)
  t.teardown(() => context.disable())
  const { provider, spans } = recordingProvider()
  const tracer = redactingTracerProvider(provider).getTracer('test')
  const seen: unknown[] = []
  const fn = (span: Span): string => { seen.push(trace.getActiveSpan() === span); span.setAttribute('q', '?key=secret'); return 'done' }
  t.equal(tracer.startActiveSpan('one', fn), 'done')
  t.equal(tracer.startActiveSpan('two', { attributes: { a: '?token=secret' } }, fn), 'done')
  t.equal(tracer.startActiveSpan('three', {}, context.active(), fn), 'done')
  t.same(seen, [true, true, true])
  t.notMatch(JSON.stringify(spans), /secret/)
})

t.test('redactAttribute leaves numbers, booleans and ordinary strings alone', async t => {
  t.equal(redactAttribute('http.response.status_code', 200), 200)
  t.equal(redactAttribute('flag', true), true)
  t.equal(redactAttribute('http.route', '/v1/api/auth/validate'), '/v1/api/auth/validate')
  t.equal(redactAttribute('url.query', 'user_id=1&x=2'), 'user_id=1&x=2')
})
