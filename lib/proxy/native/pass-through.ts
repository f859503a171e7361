// Native paths the proxy does not serve itself (embedContent, batchEmbedContents, cachedContents, files and
// their uploads, batches, operations) go to the backend as they are, with the proxy's credentials: the
// backend supplies only its base URL and credentials (Backend.forward); what passes is decided here. (The Vertex
// backend's forward sends nothing raw: lib/proxy/upstream/vertex-forward.ts translates what it serves.)
//  - only paths under an API prefix (`/v1beta`, `/v1`, `/upload/v1beta`, `/upload/v1`), with no `.`/`..` segment
//    (plain or encoded), no empty segment (`//host`), no encoded or back slash: the target stays the
//    backend's host and the path the client named
//  - headers from an allow-list only: the client's key, Authorization, cookies and hop-by-hop headers never pass
//  - the query without `key`, only the parameters its route takes (./forwarded-query.ts); the body and the answer streamed, never held whole (Route.streamBody)
//  - every request goes through the governed lifecycle (lib/proxy/call/lifecycle.ts): a call on a model
//    (`models/{model}:{action}` or `tunedModels/{model}:{action}`, any case) and a cache creation (its model in the
//    body, handed on resolved as ForwardRequest.bodyModel) are model calls the pipeline runs (passThroughCall, a
//    `forward` operation of lib/proxy/call/run-model-call.ts), admitted and charged from the usage the answer reports;
//    any other path is a request, counted and recorded (docs/model-proxy.md, "Limits and usage")
import type { Handler, HandlerRequest, HandlerResponse } from '../../http/contract.ts'
import { isStreamBody } from '../../http/contract.ts'
import { fail } from '../../errors.ts'
import { CORS_HEADERS } from '../access/client-auth.ts'
import type { ProxyCaller } from '../access/caller.ts'
import type { Admitted } from '../access/ownership.ts'
import type { ProxyContext } from '../context.ts'
import type { Backend, ForwardRequest, ForwardResponse } from '../upstream/backend.ts'
import { notPassedThrough } from '../upstream/forward.ts'
import { forwardedQuery } from './forwarded-query.ts'
import { allowedModel } from '../access/model-policy.ts'
import { allowedTunedModel, beginRequest } from '../call/lifecycle.ts'
import { modelTargetOf, producesNoOutput, spendsNoTokens } from '../call/model-path.ts'
import type { ModelTarget } from '../call/model-path.ts'
import type { ForwardOperation, Parsed } from '../call/surface.ts'
import { refuseExplicitCache } from '../models/data.ts'

/** The API prefixes passed through; the first one in the request path starts the forwarded path (a host may mount the routes under its own prefix). */
const API_ROOT = /\/(?:upload\/)?v1(?:beta)?(?=\/|$)/

/** Request headers that pass: content negotiation, Google's client tag and the resumable upload protocol's own. */
const REQUEST_HEADERS = new Set(['accept', 'accept-language', 'content-type', 'content-length', 'x-goog-api-client', 'if-match', 'if-none-match'])
/** Answer headers that pass (plus x-goog-upload-*). */
const RESPONSE_HEADERS = new Set(['content-type', 'content-disposition', 'etag', 'last-modified', 'retry-after'])
const UPLOAD_HEADER = /^x-goog-upload-/

export interface ForwardedPath {
  /** From the API prefix on, as received. */
  path: string
  /** What comes before the API prefix (a host's mount prefix), '' mostly. */
  mount: string
}

function refused (path: string, why: string): Error {
  return fail('INVALID_INPUT', `The path ${path} is not passed through: ${why}`)
}

/** The path to forward, checked; throws INVALID_INPUT (400) for any path that could reach outside the API prefix. */
export function forwardedPath (raw: string): ForwardedPath {
  const m = API_ROOT.exec(raw)
  if (m === null) throw fail('NOT_FOUND', `Only paths under /v1beta, /v1 and /upload/v1beta pass through, not ${raw}`)
  const path = raw.slice(m.index)
  if (/%2f|%5c|\\/i.test(path)) throw refused(path, 'it holds an encoded or back slash')
  const rest = path.slice(m[0].length)
  if (rest === '' || rest === '/') throw fail('NOT_FOUND', `No resource named in ${path}`)
  for (const segment of rest.slice(1).split('/')) {
    let decoded: string
    try {
      decoded = decodeURIComponent(segment)
    } catch {
      throw refused(path, 'it is not validly URL-encoded')
    }
    if (segment === '') throw refused(path, 'it has an empty segment')
    if (decoded === '.' || decoded === '..') throw refused(path, 'it has a dot segment')
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(decoded)) throw refused(path, 'it holds control characters')
  }
  return { path, mount: raw.slice(0, m.index) }
}

export function passThroughHeaders (headers: HandlerRequest['headers']): Record<string, string> {
  const passed: Record<string, string> = {}
  for (const name in headers) {
    const value = headers[name]
    if (value !== undefined && (REQUEST_HEADERS.has(name) || UPLOAD_HEADER.test(name))) passed[name] = value
  }
  return passed
}

/** The proxy's own base URL as this client reached it, for upload URLs the upstream hands out; undefined without a Host header. */
function proxyBase (req: HandlerRequest, mount: string): string | undefined {
  const host = req.headers.host
  if (host === undefined || !/^[A-Za-z0-9.:[\]-]+$/.test(host)) return undefined
  const proto = req.headers['x-forwarded-proto']?.split(',')[0].trim() === 'https' ? 'https' : 'http'
  return `${proto}://${host}${mount}`
}

function answerHeaders (given: Record<string, string>, upstreamBase: string, ownBase: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const name in given) {
    if (RESPONSE_HEADERS.has(name)) headers[name] = given[name]
    else if (UPLOAD_HEADER.test(name)) {
      // The next upload request must come back here too: it carries no key the client may send upstream itself.
      const value = given[name]
      headers[name] = ownBase !== undefined && value.startsWith(upstreamBase + '/') ? ownBase + value.slice(upstreamBase.length) : value
    }
  }
  return headers
}

/** The body as bytes arriving: streamed already (Route.streamBody), or one chunk for a body a host read or parsed itself. */
function byteStream (body: unknown): AsyncIterable<Uint8Array> | undefined {
  if (body === undefined) return undefined
  if (isStreamBody(body)) return body as AsyncIterable<Uint8Array>
  const bytes = body instanceof Uint8Array ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body))
  return (async function * oneChunk () { yield bytes })()
}

/** The request's Content-Length when it gives a whole number (the upload quota's up-front check). */
function declaredLength (req: HandlerRequest): number | undefined {
  const length = Number(req.headers['content-length'])
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined
}

/** Creating a cache (`POST .../cachedContents`, any case) names its model in the body, not the path. */
const CACHE_CREATE = /^\/v1(?:beta)?\/cachedContents\/?$/i
const createsCache = (method: string, path: string): boolean => method === 'POST' && CACHE_CREATE.test(path)

/**
 * The body of a cache creation, read whole (the route bounds its size and read time) so that its `model` meets the
 * same catalogue, policy and limits as a model in the path; the bytes then go on unchanged. A body that is not a JSON
 * object naming a model (a BOM, protobuf, anything else) is refused here: it cannot be checked, so it never passes.
 */
async function cacheCreation (body: AsyncIterable<Uint8Array> | undefined): Promise<{ bytes: Buffer, model: string }> {
  const chunks: Uint8Array[] = []
  if (body !== undefined) for await (const chunk of body) chunks.push(chunk)
  const bytes = Buffer.concat(chunks)
  let named: unknown
  try {
    named = (JSON.parse(bytes.toString('utf8')) as { model?: unknown } | null)?.model
  } catch {
    throw fail('INVALID_INPUT', 'A cache creation body must be a JSON object (UTF-8, no byte order mark) naming its `model`')
  }
  if (typeof named !== 'string' || named === '') throw fail('INVALID_INPUT', 'A cache creation body must name its `model`')
  return { bytes, model: named }
}

/** A forwarded request's checked target: its path from the API prefix, the host's mount before it, its query, the backend's forward. */
interface Target extends ForwardedPath {
  query: string
  forward: NonNullable<Backend['forward']>
}

/** The target of a request the proxy does not serve itself, checked; throws before anything is metered or sent. */
function targetOf (ctx: ProxyContext, req: HandlerRequest): Target {
  const backend = ctx.backend
  if (backend.forward === undefined) {
    throw notPassedThrough(backend.name, req.path, 'other native paths pass through on the gemini-api and vertex backends only')
  }
  const { path, mount } = forwardedPath(req.path)
  return { path, mount, query: forwardedQuery(req.method, path, req.query), forward: backend.forward.bind(backend) }
}

/** Tenant isolation (lib/proxy/access/ownership.ts): allow-list, owners and the resources a body names, before anything is metered or sent. */
async function admitted (ctx: ProxyContext, req: HandlerRequest, caller: ProxyCaller, target: Target): Promise<Admitted> {
  return await ctx.ownership.admit(caller, req.method, target.path, req.query, byteStream(req.body), declaredLength(req))
}

/** Whether a forwarded request is a call on a model: an action on a model in the path, or a cache creation. */
function callsModel (method: string, path: string): boolean {
  return createsCache(method, path) || modelTargetOf(path)?.action !== undefined
}

/**
 * Sends an admitted request upstream; its answer after tenant isolation settled it (what was created recorded, a list
 * kept to the caller's own, a page left empty filled from the next), and the answer headers that pass.
 */
async function sent (req: HandlerRequest, target: Target, owned: Admitted, body: AsyncIterable<Uint8Array> | undefined, bodyModel?: string): Promise<{ answer: ForwardResponse, headers: Record<string, string> }> {
  const { path, query, forward } = target
  const request: ForwardRequest = { method: req.method, path, query, headers: { ...passThroughHeaders(req.headers), ...owned.headers }, body, signal: req.signal, bodyModel }
  const answer = await owned.settle(await forward(request), async pageToken => await forward({ ...request, query: forwardedQuery(req.method, path, { ...req.query, pageToken }) }))
  return { answer, headers: answerHeaders(answer.headers, answer.baseUrl, proxyBase(req, target.mount)) }
}

/** A forwarded model call as the pipeline reads it: its target, admitted, and the body to send. */
type ForwardedCall = Parsed<{ target: Target, owned: Admitted, sent: AsyncIterable<Uint8Array> | undefined, namesModel: boolean }>

/**
 * A forwarded model call's parse: a cache creation's model read from its body (read whole, then sent on unchanged),
 * any other's from its path, whatever the action. `readBytes` is the body's size when tenant isolation read it (a
 * key's JSON), the floor of the input estimate, so a chunked body without Content-Length is never estimated at 0.
 */
async function parseForwarded (ctx: ProxyContext, req: HandlerRequest, caller: ProxyCaller): Promise<ForwardedCall> {
  const target = targetOf(ctx, req)
  const owned = await admitted(ctx, req, caller, target)
  const referencedInputTokens = owned.referencedTokens
  if (createsCache(req.method, target.path)) {
    const { bytes, model } = await cacheCreation(owned.body)
    // Before admission: a model that takes no explicit caches would only be refused upstream.
    refuseExplicitCache(ctx.catalog.resolve(model))
    return { model, noOutput: true, readBytes: bytes.length, referencedInputTokens, body: { target, owned, sent: byteStream(bytes), namesModel: true } }
  }
  const { collection, model, action } = modelTargetOf(target.path) as Required<ModelTarget>
  const unreported = spendsNoTokens(action) ? 'nothing' : 'estimate'
  return { model, tuned: collection === 'tunedModels', noOutput: producesNoOutput(action), unreported, readBytes: owned.readBytes, referencedInputTokens, body: { target, owned, sent: owned.body, namesModel: false } }
}

/**
 * The pass-through's model calls, an operation runModelCall runs (lib/proxy/call/run-model-call.ts): admitted, then
 * forwarded as they are, charged the usage the answer reports as it passes (meteredAnswer's Gemini usage scan).
 */
export function passThroughCall (ctx: ProxyContext): ForwardOperation<ForwardedCall> {
  return {
    kind: 'forward',
    parse: async (req, caller) => await parseForwarded(ctx, req, caller),
    async forward ({ body: { target, owned, sent: body, namesModel } }, call, req) {
      // A cache creation's model goes on resolved and allowed (ForwardRequest.bodyModel).
      return await sent(req, target, owned, body, namesModel ? call.model.base : undefined)
    },
  }
}

/**
 * Forwards one native request the proxy does not serve itself; `caller` has passed authentication. A call on a model
 * is `modelCall`'s (the pipeline running passThroughCall); any other is a request, counted and recorded.
 */
export async function passThrough (ctx: ProxyContext, req: HandlerRequest, caller: ProxyCaller, modelCall: Handler): Promise<HandlerResponse> {
  const target = targetOf(ctx, req)
  if (callsModel(req.method, target.path)) return await modelCall(req)
  const owned = await admitted(ctx, req, caller, target)
  const named = modelTargetOf(target.path)
  // A path on the model itself (its details, its operations): the policy applies, and it is a request.
  if (named?.collection === 'tunedModels') allowedTunedModel(ctx, caller, named.model)
  else if (named !== undefined) allowedModel(ctx, caller, named.model)
  const request = await beginRequest(ctx, req, caller, 'native')
  const { answer, headers } = await sent(req, target, owned, owned.body)
  request.end(answer.status)
  return { status: answer.status, headers: { ...CORS_HEADERS, ...headers, ...request.headers }, body: answer.body }
}
