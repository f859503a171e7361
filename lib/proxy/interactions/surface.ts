// Google's Interactions API served through the gateway (docs/interactions.md): create (streamed or not) is a model
// call under the lifecycle; get, cancel and delete are requests on the creator's own interaction. The body is
// Google's own wire format, so it is passed on after the checks rather than translated; answers come back as the
// upstream gave them, failures in Google's error shape. Each route exists under /v1beta and /v1 (the API is GA in v1).
import type { Handler, HandlerRequest } from '../../http/contract.ts'
import { readJsonBody } from '../../http/json-body.ts'
import { CORS_HEADERS } from '../access/client-auth.ts'
import type { ProxyCaller } from '../access/caller.ts'
import { beginRequest } from '../call/lifecycle.ts'
import { applyInteractionRules } from '../call/request-rules.ts'
import type { ForwardOperation, ParsedCall, SurfaceDeclaration, SurfaceRoute } from '../call/surface.ts'
import type { ProxyContext } from '../context.ts'
import { createNativeErrorResponse } from '../native/error-body.ts'
import { SSE_HEADERS } from '../routes-stream.ts'
import type { Backend, ForwardRequest, ForwardResponse } from '../upstream/backend.ts'
import { notPassedThrough } from '../upstream/forward.ts'
import { mediaUrisIn } from '../upstream/resource-pins.ts'
import { interactionReader } from './answer.ts'
import { interactionHistoryTokens } from '../access/reservation.ts'
import { interactionToolsUsed } from '../access/tool-policy.ts'
import type { TokenUsage } from '../../metering/token-usage.ts'
import { apiRevision, createRequest, interactionId, interactionResource } from './request.ts'

type Forward = NonNullable<Backend['forward']>

/** The query fields a get passes on (resuming a stream, the input included); anything else stays here. */
const GET_QUERY = ['include_input', 'last_event_id', 'stream'] as const
const QUERY_VALUE = /^[A-Za-z0-9_.:-]{1,256}$/

/** The backend's forward, on the one backend Google serves interactions from here; a catalogue error elsewhere. */
function interactionsForward (ctx: ProxyContext, req: HandlerRequest): Forward {
  const backend = ctx.backend
  if (backend.name !== 'gemini-api' || backend.forward === undefined) {
    throw notPassedThrough(backend.name, req.path, 'the Interactions API is served on the gemini-api backend only (docs/interactions.md)')
  }
  return backend.forward.bind(backend)
}

/** Headers sent upstream: the client's Api-Revision (checked), its client tag, and what it accepts. */
function upstreamHeaders (req: HandlerRequest): Record<string, string> {
  const headers: Record<string, string> = { ...apiRevision(req.headers) }
  const accept = req.headers.accept
  if (accept === 'application/json' || accept === 'text/event-stream') headers.accept = accept
  const client = req.headers['x-goog-api-client']
  if (client !== undefined && client.length <= 256) headers['x-goog-api-client'] = client
  return headers
}

/** The answer's content type (SSE's own headers for a stream) and an upstream's Retry-After. */
function answerHeaders (answer: ForwardResponse): Record<string, string> {
  const type = answer.headers['content-type']
  const after = answer.headers['retry-after']
  const retry: Record<string, string> = after === undefined ? {} : { 'retry-after': after }
  if (type?.startsWith('text/event-stream') === true) return { ...SSE_HEADERS, ...retry }
  return type === undefined ? retry : { 'content-type': type, ...retry }
}

function oneChunk (bytes: Uint8Array): AsyncIterable<Uint8Array> {
  return (async function * once () { yield bytes })()
}

/** A create as the pipeline reads it, with the checked request. */
type CreateCall = ParsedCall & { asked: ReturnType<typeof createRequest> }

function interactionsRoutes (ctx: ProxyContext): SurfaceRoute[] {
  const route = (method: string, path: string, handler: Handler): SurfaceRoute => ({ method, path, handler })

  /** The create, a model call the pipeline runs (lib/proxy/call/run-model-call.ts): its body forwarded as Google's own. */
  const create = (version: string): ForwardOperation<CreateCall> => ({
    kind: 'forward',
    async parse (req, caller) {
      interactionsForward(ctx, req)
      const asked = createRequest(readJsonBody(req), caller)
      // Tenant isolation (lib/proxy/access/ownership.ts): a conversation continued from someone else's interaction,
      // or a file or cache of someone else's, is a 404 before the call begins.
      const history = asked.previousId === undefined ? 0 : await ctx.ownership.checkOwned(caller, interactionResource(asked.previousId))
      const referenced = await ctx.ownership.checkReferences(caller, [asked.body, mediaUrisIn(asked.body).map(uri => ({ fileUri: uri }))])
      return { model: asked.model, maxOutputTokens: asked.maxOutputTokens, outputCount: asked.outputCount, referencedInputTokens: history + referenced, asked }
    },
    async forward ({ asked }, call, req, caller) {
      // Where the translating surfaces' generate checks it (lib/proxy/call/lifecycle.ts): after admission, before the upstream call.
      ctx.tools.check(caller, interactionToolsUsed(asked.body.tools))
      const sent = Buffer.from(JSON.stringify(applyInteractionRules({ ...asked.body, model: call.model.base }, call.model)))
      const answer = await interactionsForward(ctx, req)({
        method: 'POST',
        path: `${version}/interactions`,
        query: '',
        headers: { ...upstreamHeaders(req), 'content-type': 'application/json', 'content-length': String(sent.length) },
        body: oneChunk(sent),
        signal: req.signal,
        bodyModel: call.model.base,
      })
      const streamed = (answer.headers['content-type'] ?? '').startsWith('text/event-stream')
      const recordOwner = async (id: string, usage?: TokenUsage): Promise<void> => {
        if (asked.stored) await ctx.ownership.createdInteraction(caller, interactionResource(id), interactionHistoryTokens(usage))
      }
      return { answer, reader: interactionReader(streamed, recordOwner), headers: answerHeaders(answer) }
    },
  })

  /** A request on one interaction of the caller's own: a 404 for anyone else's before anything is sent. */
  const onItem = (version: string, method: string, suffix: string): Handler => async req => {
    const caller: ProxyCaller = await ctx.checkAuth(req)
    const forward = interactionsForward(ctx, req)
    const request = await beginRequest(ctx, req, caller, 'interactions')
    const id = interactionId(req.params.id, 'The interaction id')
    const resource = interactionResource(id)
    await ctx.ownership.checkOwned(caller, resource)
    const query = new URLSearchParams()
    if (method === 'GET') {
      for (const name of GET_QUERY) {
        const value = req.query[name]
        if (value !== undefined && QUERY_VALUE.test(value)) query.set(name, value)
      }
    }
    const text = query.toString()
    const forwarded: ForwardRequest = { method, path: `${version}/${resource}${suffix}`, query: text === '' ? '' : `?${text}`, headers: upstreamHeaders(req), signal: req.signal }
    const answer = await forward(forwarded)
    const ok = answer.status >= 200 && answer.status < 300
    if (ok && method === 'DELETE') await ctx.ownership.deleted(caller, resource)
    request.end(answer.status)
    return { status: answer.status, headers: { ...CORS_HEADERS, ...answerHeaders(answer), ...request.headers }, body: answer.body }
  }

  return ['/v1beta', '/v1'].flatMap(version => [
    { method: 'POST', path: `${version}/interactions`, call: create(version) },
    route('GET', `${version}/interactions/{id}`, onItem(version, 'GET', '')),
    route('DELETE', `${version}/interactions/{id}`, onItem(version, 'DELETE', '')),
    route('POST', `${version}/interactions/{id}/cancel`, onItem(version, 'POST', '/cancel')),
  ])
}

/** Failures answer in Google's shape, as the native routes' do. */
export const interactionsSurface: SurfaceDeclaration = {
  name: 'interactions',
  errorResponse: createNativeErrorResponse,
  routes: interactionsRoutes,
}
