// The Responses WebSocket transport (docs/responses.md, "WebSocket transport"): Codex's `supports_websockets`
// opens GET /v1/responses upgraded and sends `{"type":"response.create", ...body}` frames. Each create is served as
// a POST /v1/responses on the same route (lib/http/serve.ts serveRoute: key, body limits, handler, error mapper),
// so admission, limits, usage and the model policy are the POST's own; its SSE events go out one JSON text frame
// each. A refusal before the stream is Codex's wrapped error event ({"type":"error","status",...}); a key no longer
// valid also closes the socket. One response at a time per socket, within the socket's limits (socket-limits.ts).
// Each response is told to the host as a request (UpgradeHost.sockets.served: its log line, metrics and span).
import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import type { HandlerRequest, Route, UpgradeHost } from '../../http/contract.ts'
import { isStreamBody } from '../../http/contract.ts'
import { fail } from '../../errors.ts'
import { serveRoute } from '../../http/serve.ts'
import type { ServeOptions } from '../../http/serve.ts'
import { CLOSE } from '../../http/websocket.ts'
import type { ServerWebSocket } from '../../http/websocket.ts'
import { responsesError } from './error-body.ts'
import { inputItems } from './request-to-gemini.ts'
import type { InputItem } from './request-schema.ts'
import type { SocketDrain, SocketLimits } from './socket-limits.ts'

export interface SocketSettings {
  limits: SocketLimits
  /** Where the socket's drain is kept for the host's shutdown (Proxy.closeSockets). */
  drains: SocketDrain
  /** Counts the upgraded socket against its key's cap (socket-limits.ts, socketCounts), answering its release. */
  hold: (upgrade: HandlerRequest) => () => void
}

/** The last response of a socket, which Codex's next create may continue by id with only the new items. */
interface LastResponse { id: string, input: InputItem[], output: InputItem[] }

/** Codex's wrapped error event (docs/responses.md, "WebSocket transport"): its status, the POST's error and headers. */
function errorEvent (status: number, error: unknown, headers: Record<string, string> = {}): string {
  return JSON.stringify({ type: 'error', status, error, headers })
}

function refusal (err: unknown): string {
  const { status, headers, body } = responsesError(err)
  return errorEvent(status, body.error, headers)
}

/**
 * The request body of a create frame: the frame less its `type`, always streamed; a `previous_response_id` naming
 * this socket's last response is expanded here (its input and output before the new items), whether or not it was
 * stored, as OpenAI's socket keeps it in the connection.
 */
function createBody (frame: Record<string, unknown>, last: LastResponse | undefined): { body: Record<string, unknown>, input: InputItem[] | undefined } {
  const { type: _type, ...body } = frame
  body.stream = true
  if (last === undefined || body.previous_response_id !== last.id) return { body, input: undefined }
  const input = [...last.input, ...last.output, ...inputItems(body as { input?: string | InputItem[] })]
  body.input = input
  delete body.previous_response_id
  return { body, input }
}

/** The response of a warm-up: nothing generated, nothing used. */
function emptyResponse (model: string): Record<string, unknown> & { id: string } {
  return { id: `resp_${randomBytes(24).toString('hex')}`, object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'completed', model, output: [], usage: { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 } }
}

/** Each complete SSE event in `text` (the rest kept for the next chunk, stream.ts writes whole ones), and whether a keep-alive came. */
function sseData (text: string): { data: Array<{ event: string, data: string }>, rest: string, keepAlive: boolean } {
  const data: Array<{ event: string, data: string }> = []
  let keepAlive = false
  let start = 0
  for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n', start)) {
    const block = text.slice(start, end)
    start = end + 2
    const at = block.indexOf('\ndata: ')
    if (at >= 0 && block.startsWith('event: ')) data.push({ event: block.slice(7, at), data: block.slice(at + 7) })
    else if (block.startsWith(':')) keepAlive = true
  }
  return { data, rest: text.slice(start), keepAlive }
}

/**
 * The upgrade of GET /v1/responses: each create frame served on `post` (the POST /v1/responses route), its answer
 * sent as frames; a `generate: false` create (Codex's warm-up) on `warmup`, answered with an empty completed response
 * that the next create continues. The upgrade request's headers (the key included) stand for every create's.
 */
export function responsesSocket (post: Route, warmup: Route, settings: SocketSettings, defaults: ServeOptions = {}): NonNullable<Route['upgrade']> {
  return function responsesUpgrade (upgrade: HandlerRequest, socket: ServerWebSocket, host: UpgradeHost): void {
    const options: ServeOptions = { ...defaults, logger: host.logger ?? defaults.logger }
    const session: Session = { running: undefined, last: undefined }
    const release = settings.hold(upgrade)
    const timers = socketTimers(socket, settings.limits, () => session.running === undefined)
    const closed = new Promise<void>(resolve => socket.onClose(() => resolve()))
    const forget = settings.drains.add(async () => {
      timers.end(CLOSE.GOING_AWAY, 'the gateway is shutting down')
      await closed
    })
    socket.onClose(() => {
      release()
      forget()
      timers.stop()
      session.running?.abort(new Error('client disconnected'))
    })

    socket.onMessage(text => {
      let frame: unknown
      try {
        frame = JSON.parse(text)
      } catch {
        socket.send(refusal(fail('INVALID_JSON')))
        return
      }
      const type = (frame as { type?: unknown } | null)?.type
      // Codex acknowledges a response it has handled; nothing to do.
      if (type === 'response.processed') return
      if (type !== 'response.create' || typeof frame !== 'object' || Array.isArray(frame)) {
        socket.send(refusal(fail('INVALID_INPUT', 'A frame must be a JSON object of type response.create')))
        return
      }
      if (session.running !== undefined) {
        socket.send(refusal(fail('INVALID_INPUT', 'A response is already in progress on this socket: send the next response.create after its response.completed')))
        return
      }
      const controller = new AbortController()
      session.running = controller
      timers.busy()
      const startedAt = Date.now()
      const served = (status: number, aborted: boolean): void => {
        host.sockets?.served?.({ method: 'POST', route: post.path, status, startedAt, seconds: (Date.now() - startedAt) / 1000, remoteAddress: upgrade.remoteAddress, aborted })
      }
      const serve = async (): Promise<void> => {
        try {
          const { status, aborted } = await turn({ post, warmup, upgrade, socket, session, options }, frame as Record<string, unknown>, controller.signal)
          served(status, aborted)
        } catch (err) {
          options.logger?.error({ err }, 'a Responses WebSocket turn failed')
          served(500, false)
          socket.close(CLOSE.INTERNAL_ERROR, 'internal error')
        }
      }
      const run = host.sockets?.run ?? (async (_request, serve) => await serve())
      run({ method: 'POST', route: post.path }, serve).catch(() => {}).finally(() => {
        if (session.running === controller) session.running = undefined
        timers.idle()
      })
    })
  }
}

/** What one socket keeps between its responses. */
interface Session { running: AbortController | undefined, last: LastResponse | undefined }

interface Turn { post: Route, warmup: Route, upgrade: HandlerRequest, socket: ServerWebSocket, session: Session, options: ServeOptions }

/** Serves one create frame and sends its answer; resolves with the POST's status, and whether the socket closed first. */
async function turn ({ post, warmup, upgrade, socket, session, options }: Turn, frame: Record<string, unknown>, signal: AbortSignal): Promise<{ status: number, aborted: boolean }> {
  const { body, input } = createBody(frame, session.last)
  const bytes = Buffer.from(JSON.stringify(body))
  const warm = body.generate === false
  const response = await serveRoute(warm ? warmup : post, {
    method: 'POST',
    path: post.path,
    params: {},
    query: upgrade.query,
    headers: { ...upgrade.headers, 'content-type': 'application/json', 'content-length': String(bytes.length) },
    remoteAddress: upgrade.remoteAddress,
    body: Readable.from([bytes]),
    signal,
  }, options)
  const newInput = (): InputItem[] => input ?? inputItems(body as { input?: string | InputItem[] })
  if (warm && response.status === 200) {
    const done = emptyResponse((response.body as { model: string }).model)
    session.last = { id: done.id, input: newInput(), output: [] }
    socket.send(JSON.stringify({ type: 'response.created', sequence_number: 0, response: { ...done, status: 'in_progress' } }))
    socket.send(JSON.stringify({ type: 'response.completed', sequence_number: 1, response: done }))
    return { status: response.status, aborted: false }
  }
  if (!isStreamBody(response.body)) {
    const error = (response.body as { error?: unknown } | undefined)?.error ?? response.body
    socket.send(errorEvent(response.status, error, response.headers))
    // A key refused mid-session (revoked, disabled) ends the session, not only this response.
    if (response.status === 401) socket.close(CLOSE.POLICY_VIOLATION, 'the key is no longer accepted')
    return { status: response.status, aborted: false }
  }
  let rest = ''
  let completed = false
  for await (const chunk of response.body) {
    if (socket.closed) break
    const parsed = sseData(rest + (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString()))
    rest = parsed.rest
    if (parsed.keepAlive) socket.ping()
    for (const { event, data } of parsed.data) {
      if (event === 'response.completed') {
        const done = (JSON.parse(data) as { response: { id: string, output: InputItem[] } }).response
        session.last = { id: done.id, input: newInput(), output: done.output }
        completed = true
      }
      socket.send(data)
    }
    // A slow reader holds the upstream back rather than the gateway's memory, as an SSE response does.
    await socket.drained()
  }
  return { status: response.status, aborted: socket.closed && !completed }
}

/**
 * The idle and lifetime timers of one socket: `idle()` at the start and after each response arms the idle timeout,
 * `busy()` as a response starts disarms it; past its lifetime, or once `end()` is called (a shutdown), the socket
 * closes as soon as `quiet()` (no response running).
 */
function socketTimers (socket: ServerWebSocket, limits: SocketLimits, quiet: () => boolean): { idle: () => void, busy: () => void, end: (code: number, reason: string) => void, stop: () => void } {
  let idle: NodeJS.Timeout | undefined
  let ending: { code: number, reason: string } | undefined
  const lifetime = setTimeout(() => timers.end(CLOSE.NORMAL, 'the socket reached its maximum lifetime'), limits.maxLifetimeSeconds * 1000)
  lifetime.unref()
  const timers = {
    idle () {
      clearTimeout(idle)
      if (!quiet()) return
      if (ending !== undefined) return socket.close(ending.code, ending.reason)
      idle = setTimeout(() => { if (quiet()) socket.close(CLOSE.NORMAL, 'idle timeout') }, limits.idleTimeoutSeconds * 1000)
      idle.unref()
    },
    busy () { clearTimeout(idle) },
    end (code: number, reason: string) {
      ending ??= { code, reason }
      if (quiet()) socket.close(ending.code, ending.reason)
    },
    stop () { clearTimeout(idle); clearTimeout(lifetime) },
  }
  timers.idle()
  return timers
}
