import { reserveBody } from './body-budget.ts'
import type { HandlerRequest, HandlerResponse, Route } from './contract.ts'
import { authenticateRoute, isStreamBody } from './contract.ts'
import { createRouter } from './router.ts'
import { fail } from '../errors.ts'
import { DEFAULT_BODY_READ_LIMITS, watchBodyRead } from './read-body.ts'
import type { BodyReadLimits } from './read-body.ts'

export interface FetchHandlerOptions {
  /** Client address for a request (the login limiter uses it); fetch Requests do not carry one. */
  remoteAddress?: (request: Request) => string | undefined
}

/**
 * A fetch-style handler `(Request) => Promise<Response>` serving a route table, for runtimes and
 * frameworks built on the Fetch API. Unmatched paths answer 404 in the nearest surface's shape.
 */
export function createFetchHandler (routes: readonly Route[], options: FetchHandlerOptions = {}) {
  const router = createRouter(routes)
  return async function gatehouseFetch (request: Request): Promise<Response> {
    const url = new URL(request.url)
    const method = request.method.toUpperCase()
    const found = router.match(method, url.pathname)
    if (found.route === undefined) {
      const response = found.nearest?.errorResponse(fail(found.methodNotAllowed ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND')) ??
        { status: 404, body: { detail: 'Not found' } }
      return toResponse(response)
    }
    const { route, params } = found
    let release: (() => void) | undefined
    try {
      const headers = Object.fromEntries(request.headers)
      const handlerRequest: HandlerRequest = {
        method,
        path: url.pathname,
        params,
        query: Object.fromEntries([...url.searchParams].reverse()),
        headers,
        body: undefined,
        remoteAddress: options.remoteAddress?.(request),
        signal: request.signal
      }
      // Credentials first: a request without them is refused before its body is reserved or read.
      const refused = route.authenticate === undefined ? undefined : await authenticateRoute(route, handlerRequest)
      if (refused !== undefined) return toResponse(refused)
      if (request.body !== null) release = await reserveBody(route, headers, request.signal, handlerRequest.remoteAddress)
      handlerRequest.body = await readBody(request, route.maxBytes, route.bodyRead)
      return toResponse(await route.handler(handlerRequest))
    } catch (err) {
      return toResponse(route.errorResponse(err))
    } finally {
      release?.()
    }
  }
}

async function readBody (request: Request, maxBytes: number, limits: BodyReadLimits = DEFAULT_BODY_READ_LIMITS): Promise<Uint8Array | undefined> {
  if (request.body === null) return undefined
  const declared = Number(request.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > maxBytes) throw fail('PAYLOAD_TOO_LARGE')
  const reader = request.body.getReader()
  let expire!: () => void
  const expired = new Promise<never>((_resolve, reject) => { expire = () => reject(fail('REQUEST_TIMEOUT')) })
  expired.catch(() => {})
  const watch = watchBodyRead(limits, expire)
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { value, done } = await Promise.race([reader.read(), expired])
      if (done === true) break
      size += value.byteLength
      watch.received(value.byteLength)
      if (size > maxBytes) throw fail('PAYLOAD_TOO_LARGE')
      chunks.push(value)
    }
  } catch (err) {
    reader.cancel().catch(() => {})
    throw err
  } finally {
    watch.stop()
  }
  return size === 0 ? undefined : Buffer.concat(chunks)
}

function toResponse (response: HandlerResponse): Response {
  const headers = new Headers(response.headers)
  const { body } = response
  if (isStreamBody(body)) {
    const encoder = new TextEncoder()
    const iterator = body[Symbol.asyncIterator]()
    const stream = new ReadableStream<Uint8Array>({
      async pull (controller) {
        const { value, done } = await iterator.next()
        if (done === true) controller.close()
        else controller.enqueue(typeof value === 'string' ? encoder.encode(value) : value)
      },
      async cancel () { await iterator.return?.() }
    })
    return new Response(stream, { status: response.status, headers })
  }
  if (body === undefined) return new Response(null, { status: response.status, headers })
  if (!headers.has('content-type')) headers.set('content-type', 'application/json; charset=utf-8')
  return new Response(JSON.stringify(body), { status: response.status, headers })
}
