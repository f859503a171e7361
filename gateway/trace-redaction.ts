// Spans go to a collector that more people can read than the secrets' owners, so every span the
// instrumentations make passes the log's redaction rules (logger.ts) on its way in: attribute values (url.full,
// url.query, http.target…: `?key=`, `?token=`, `?tok%65n=`, Bearer values, URL passwords), header attributes
// with a secret name (authorization, token, x-goog-api-key…), span names, event attributes, recorded exceptions
// and status messages. It wraps the tracer each instrumentation uses, so it holds whatever exporter the OTEL_*
// variables choose.
import { context, trace } from '@opentelemetry/api'
import type { Attributes, AttributeValue, Context, Exception, Link, Span, SpanContext, SpanOptions, SpanStatus, TimeInput, Tracer, TracerOptions, TracerProvider } from '@opentelemetry/api'
import { isSecretField, redactString, REDACTED } from './logger.ts'

const HEADER_ATTRIBUTE = /^http\.(?:request|response)\.header\.(.+)$/

/** One attribute's value with its secrets replaced; a header attribute with a secret name loses its value. */
export function redactAttribute (key: string, value: AttributeValue): AttributeValue {
  const header = HEADER_ATTRIBUTE.exec(key)
  if (header !== null && isSecretField(header[1])) return Array.isArray(value) ? value.map(() => REDACTED) : REDACTED
  // url.query is the query without its `?` (the http instrumentation's form): redact it as a query.
  if (typeof value === 'string') return key.endsWith('.query') && !value.startsWith('?') ? redactString('?' + value).slice(1) : redactString(value)
  if (Array.isArray(value)) return value.map(v => typeof v === 'string' ? redactString(v) : v) as AttributeValue
  return value
}

function redactAttributes (attributes: Attributes | undefined): Attributes | undefined {
  if (attributes === undefined) return undefined
  const out: Attributes = {}
  for (const [key, value] of Object.entries(attributes)) out[key] = value === undefined ? value : redactAttribute(key, value)
  return out
}

function redactException (exception: Exception): Exception {
  if (typeof exception === 'string') return redactString(exception)
  const out: { code?: string | number, name?: string, message?: string, stack?: string } = {}
  if (exception.code !== undefined) out.code = exception.code
  if (exception.name !== undefined) out.name = exception.name
  if (exception.message !== undefined) out.message = redactString(exception.message)
  if (exception.stack !== undefined) out.stack = redactString(exception.stack)
  return out as Exception
}

const redactLink = (link: Link): Link => link.attributes === undefined ? link : { ...link, attributes: redactAttributes(link.attributes) }

function isAttributes (value: Attributes | TimeInput | undefined): value is Attributes {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)
}

class RedactingSpan implements Span {
  readonly #span: Span
  constructor (span: Span) { this.#span = span }
  spanContext (): SpanContext { return this.#span.spanContext() }
  setAttribute (key: string, value: AttributeValue): this {
    this.#span.setAttribute(key, redactAttribute(key, value))
    return this
  }

  setAttributes (attributes: Attributes): this {
    this.#span.setAttributes(redactAttributes(attributes) as Attributes)
    return this
  }

  addEvent (name: string, attributesOrStartTime?: Attributes | TimeInput, startTime?: TimeInput): this {
    if (isAttributes(attributesOrStartTime)) this.#span.addEvent(redactString(name), redactAttributes(attributesOrStartTime), startTime)
    else this.#span.addEvent(redactString(name), attributesOrStartTime, startTime)
    return this
  }

  addLink (link: Link): this {
    this.#span.addLink(redactLink(link))
    return this
  }

  addLinks (links: Link[]): this {
    this.#span.addLinks(links.map(redactLink))
    return this
  }

  setStatus (status: SpanStatus): this {
    this.#span.setStatus(status.message === undefined ? status : { ...status, message: redactString(status.message) })
    return this
  }

  updateName (name: string): this {
    this.#span.updateName(redactString(name))
    return this
  }

  end (endTime?: TimeInput): void { this.#span.end(endTime) }
  isRecording (): boolean { return this.#span.isRecording() }
  recordException (exception: Exception, time?: TimeInput): void { this.#span.recordException(redactException(exception), time) }
}

class RedactingTracer implements Tracer {
  readonly #tracer: Tracer
  constructor (tracer: Tracer) { this.#tracer = tracer }

  startSpan (name: string, options: SpanOptions = {}, ctx?: Context): Span {
    const cleaned: SpanOptions = { ...options }
    if (options.attributes !== undefined) cleaned.attributes = redactAttributes(options.attributes)
    if (options.links !== undefined) cleaned.links = options.links.map(redactLink)
    return new RedactingSpan(this.#tracer.startSpan(redactString(name), cleaned, ctx))
  }

  startActiveSpan<F extends (span: Span) => unknown> (name: string, ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]): ReturnType<F> {
    const fn = rest[rest.length - 1] as F
    const options = rest.length > 1 ? rest[0] as SpanOptions : undefined
    const parent = rest.length > 2 ? rest[1] as Context : context.active()
    const span = this.startSpan(name, options, parent)
    return context.with(trace.setSpan(parent, span), fn as (span: Span) => ReturnType<F>, undefined, span)
  }
}

/** A tracer provider whose tracers make spans that redact secrets as they are set (see the file comment). */
export function redactingTracerProvider (provider: TracerProvider): TracerProvider {
  return {
    getTracer: (name: string, version?: string, options?: TracerOptions) => new RedactingTracer(provider.getTracer(name, version, options)),
  }
}
