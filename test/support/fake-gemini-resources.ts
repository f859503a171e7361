// The Gemini API's resources as test/support/fake-upstream.ts serves them (call 'resources'), after Google's REST
// reference (ai.google.dev/api: files, caching, batch-api, operations):
//
//   Files     POST /upload/v1beta/files  resumable (x-goog-upload-protocol: resumable, command start: an
//             x-goog-upload-url with upload_id on this host, status active; then `upload, finalize` answers {file}
//             with status final) or in one request ({file}); GET /v1beta/files (pageSize default 10, at most 100,
//             pageToken), GET/DELETE /v1beta/files/{id}, GET /v1beta/files/{id}:download (the bytes). A file lives
//             48 h (expirationTime); an unknown one is 403 "You do not have permission to access the File {id} or it
//             may not exist." as Google answers.
//   Caches    POST /v1beta/cachedContents ({model: models/..., ttl | expireTime; default ttl 1 h}), GET list
//             (pageSize default 100, at most 1000), GET/PATCH/DELETE /v1beta/cachedContents/{id}; an unknown one is
//             403 "CachedContent not found (or permission denied)".
//   Batches   POST /v1beta/models/{m}:batchGenerateContent | :asyncBatchEmbedContent → an Operation named batches/{id};
//             GET /v1beta/batches (ListOperationsResponse: operations, pageSize default 10), GET/DELETE
//             /v1beta/batches/{id}, POST /v1beta/batches/{id}:cancel.
//   Operations POST /v1beta/models/{m}:predictLongRunning → {name: models/{m}/operations/{id}}; GET
//             /v1beta/models/{m}/operations (list) and /v1beta/models/{m}/operations/{id}.
//
// Page tokens are opaque strings (base64 of an offset), as the upstream's are. Ids are lower-case letters and digits.
import type { FakeReply, FakeRequest } from './fake-upstream.ts'
import { googleError } from './fake-upstream.ts'

const GOOGLE = 'https://generativelanguage.googleapis.com'
const HOUR_MS = 3600_000

export interface GeminiResources {
  files: Map<string, Record<string, unknown>>
  /** Bytes of each file, by name. */
  contents: Map<string, string>
  caches: Map<string, Record<string, unknown>>
  /** Batches (Operations named batches/{id}) and predictLongRunning operations, by name. */
  operations: Map<string, Record<string, unknown>>
  /** Resumable uploads in progress: upload_id → the start's metadata. */
  uploads: Map<string, { file: Record<string, unknown> }>
  /** The clock of createTime / expireTime. */
  now: () => Date
}

export function newGeminiResources (): GeminiResources {
  return { files: new Map(), contents: new Map(), caches: new Map(), operations: new Map(), uploads: new Map(), now: () => new Date() }
}

const RESOURCE_PATH = /^\/(?:upload\/)?v1beta\/(?:files|cachedContents|batches)(?:[/:]|$)|^\/v1beta\/models\/[^/:]+(?::(?:batchGenerateContent|asyncBatchEmbedContent|predictLongRunning)$|\/operations(?:\/|$))/

/** Whether a path is one of the Gemini API resources served here. */
export function isGeminiResourcePath (path: string): boolean {
  return RESOURCE_PATH.test(path)
}

let counter = 0
function newId (): string {
  counter += 1
  return `${Math.random().toString(36).slice(2, 8)}${counter}`
}

function page (items: Array<Record<string, unknown>>, field: string, query: Record<string, string>, size: { default: number, max: number }): FakeReply {
  const from = query.pageToken === undefined ? 0 : Number(Buffer.from(query.pageToken, 'base64url').toString())
  if (!Number.isSafeInteger(from) || from < 0) return { status: 400, body: googleError(400, 'Invalid page token.') }
  const asked = query.pageSize === undefined ? size.default : Number(query.pageSize)
  const n = Math.min(Math.max(1, asked), size.max)
  const slice = items.slice(from, from + n)
  const body: Record<string, unknown> = { [field]: slice }
  if (from + n < items.length) body.nextPageToken = Buffer.from(String(from + n)).toString('base64url')
  return { body }
}

function durationMs (ttl: unknown): number | undefined {
  const m = typeof ttl === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(ttl) : null
  return m === null ? undefined : Number(m[1]) * 1000
}

/** The answer to a Gemini API resource request, or undefined for a path that is not one. */
export function geminiResourceReply (rec: FakeRequest, state: GeminiResources, base: string): FakeReply | undefined {
  if (rec.api !== 'gemini-api' || rec.call !== 'resources') return undefined
  const now = state.now()
  const stamp = now.toISOString()
  const body = rec.body !== null && typeof rec.body === 'object' ? rec.body : {}
  const header = (name: string): string => String(rec.headers[name] ?? '').toLowerCase()

  function makeFile (meta: Record<string, unknown>, content: string): Record<string, unknown> {
    const id = typeof meta.name === 'string' ? meta.name.replace(/^files\//, '') : newId()
    const name = `files/${id}`
    const file = {
      name,
      displayName: meta.displayName,
      mimeType: meta.mimeType ?? 'application/octet-stream',
      sizeBytes: String(Buffer.byteLength(content)),
      createTime: stamp,
      updateTime: stamp,
      expirationTime: new Date(now.getTime() + 48 * HOUR_MS).toISOString(),
      uri: `${GOOGLE}/v1beta/${name}`,
      state: 'ACTIVE',
      source: 'UPLOADED',
    }
    state.files.set(name, file)
    state.contents.set(name, content)
    return file
  }

  if (rec.path === '/upload/v1beta/files' && rec.method === 'POST') {
    const uploadId = rec.query.upload_id
    const raw = typeof rec.body === 'string' ? rec.body : JSON.stringify(rec.body ?? '')
    if (uploadId !== undefined) {
      const started = state.uploads.get(uploadId)
      if (started === undefined) return { status: 404, body: googleError(404, 'Upload session not found.') }
      if (!header('x-goog-upload-command').includes('finalize')) return { headers: { 'x-goog-upload-status': 'active' }, text: '' }
      state.uploads.delete(uploadId)
      return { headers: { 'x-goog-upload-status': 'final' }, body: { file: makeFile(started.file, raw) } }
    }
    const meta = typeof body.file === 'object' && body.file !== null ? body.file : {}
    if (header('x-goog-upload-protocol') === 'resumable' && header('x-goog-upload-command') === 'start') {
      const id = `up${newId()}`
      state.uploads.set(id, { file: { ...meta, mimeType: meta.mimeType ?? rec.headers['x-goog-upload-header-content-type'] } })
      return { headers: { 'x-goog-upload-url': `${base}/upload/v1beta/files?upload_id=${id}&upload_protocol=resumable`, 'x-goog-upload-status': 'active' }, text: '' }
    }
    return { body: { file: makeFile(meta, raw) } }
  }

  const files = /^\/v1beta\/files(?:\/([^/:]+)(?::(download))?)?$/.exec(rec.path)
  if (files !== null) {
    const [, id, verb] = files
    if (id === undefined) return rec.method === 'GET' ? page([...state.files.values()], 'files', rec.query, { default: 10, max: 100 }) : { status: 404, body: googleError(404) }
    const name = `files/${id}`
    const file = state.files.get(name)
    if (file === undefined) return { status: 403, body: googleError(403, `You do not have permission to access the File ${id} or it may not exist.`) }
    if (verb === 'download') return { headers: { 'content-type': String(file.mimeType) }, text: state.contents.get(name) ?? '' }
    if (rec.method === 'GET') return { body: file }
    if (rec.method === 'DELETE') { state.files.delete(name); state.contents.delete(name); return { body: {} } }
    return { status: 404, body: googleError(404) }
  }

  const caches = /^\/v1beta\/cachedContents(?:\/([^/:]+))?$/.exec(rec.path)
  if (caches !== null) {
    const id = caches[1]
    const expiry = (given: Record<string, unknown>, fallbackMs: number | undefined): string | undefined => {
      if (typeof given.expireTime === 'string') return given.expireTime
      const ms = durationMs(given.ttl) ?? fallbackMs
      return ms === undefined ? undefined : new Date(now.getTime() + ms).toISOString()
    }
    if (id === undefined && rec.method === 'POST') {
      if (typeof body.model !== 'string' || !body.model.startsWith('models/')) return { status: 400, body: googleError(400, 'model must be models/{model}.') }
      const name = `cachedContents/${newId()}`
      const cache = { name, model: body.model, displayName: body.displayName, createTime: stamp, updateTime: stamp, expireTime: expiry(body, HOUR_MS), usageMetadata: { totalTokenCount: JSON.stringify(body.contents ?? '').length } }
      state.caches.set(name, cache)
      return { body: cache }
    }
    if (id === undefined) return rec.method === 'GET' ? page([...state.caches.values()], 'cachedContents', rec.query, { default: 100, max: 1000 }) : { status: 404, body: googleError(404) }
    const name = `cachedContents/${id}`
    const cache = state.caches.get(name)
    if (cache === undefined) return { status: 403, body: googleError(403, 'CachedContent not found (or permission denied)') }
    if (rec.method === 'GET') return { body: cache }
    if (rec.method === 'DELETE') { state.caches.delete(name); return { body: {} } }
    if (rec.method === 'PATCH') {
      const updated = { ...cache, expireTime: expiry(body, undefined) ?? cache.expireTime, updateTime: stamp }
      state.caches.set(name, updated)
      return { body: updated }
    }
    return { status: 404, body: googleError(404) }
  }

  const create = /^\/v1beta\/models\/([^/:]+):(batchGenerateContent|asyncBatchEmbedContent|predictLongRunning)$/.exec(rec.path)
  if (create !== null && rec.method === 'POST') {
    const [, model, action] = create
    if (action === 'predictLongRunning') {
      const name = `models/${model}/operations/${newId()}`
      const op = { name, done: false }
      state.operations.set(name, op)
      return { body: op }
    }
    const name = `batches/${newId()}`
    const batch = body.batch ?? {}
    const type = action === 'batchGenerateContent' ? 'GenerateContentBatch' : 'EmbedContentBatch'
    const op = { name, metadata: { '@type': `type.googleapis.com/google.ai.generativelanguage.v1main.${type}`, name, model: `models/${model}`, displayName: batch.displayName, createTime: stamp, state: 'BATCH_STATE_PENDING' } }
    state.operations.set(name, op)
    return { body: op }
  }

  const modelOps = /^\/v1beta\/models\/([^/:]+)\/operations(?:\/([^/:]+))?$/.exec(rec.path)
  if (modelOps !== null && rec.method === 'GET') {
    const [, model, id] = modelOps
    if (id === undefined) return page([...state.operations.values()].filter(o => String(o.name).startsWith(`models/${model}/operations/`)), 'operations', rec.query, { default: 10, max: 100 })
    const op = state.operations.get(`models/${model}/operations/${id}`)
    return op === undefined ? { status: 404, body: googleError(404, 'Operation not found.') } : { body: op }
  }

  const batches = /^\/v1beta\/batches(?:\/([^/:]+)(?::(cancel))?)?$/.exec(rec.path)
  if (batches !== null) {
    const [, id, verb] = batches
    if (id === undefined) return rec.method === 'GET' ? page([...state.operations.values()].filter(o => String(o.name).startsWith('batches/')), 'operations', rec.query, { default: 10, max: 100 }) : { status: 404, body: googleError(404) }
    const name = `batches/${id}`
    const op = state.operations.get(name)
    if (op === undefined) return { status: 404, body: googleError(404, `Batch ${name} not found.`) }
    if (verb === 'cancel' && rec.method === 'POST') return { body: {} }
    if (rec.method === 'GET') return { body: op }
    if (rec.method === 'DELETE') { state.operations.delete(name); return { body: {} } }
  }
  return { status: 404, body: googleError(404) }
}
