// Tenant isolation of upstream resources (docs/model-proxy.md, "Upstream resources and their owners"). Every
// caller shares the gateway's upstream credential, so the gateway records who created each file, upload, cached
// content, batch and operation (OwnerStore) and holds keys to their own:
//  - a resource kind a key's access level is not allowed (`allow` of GEMINI_LIMITS' level) is a 403, and so is any
//    other upstream resource (tuned models, corpora, stores): nothing records their owners
//  - lists show only the caller's own; get, patch, delete, download of another's, and a body naming another's
//    cache or file, are a 404 made here, before anything is sent upstream (the same 404 as for a name that does
//    not exist, so nothing tells them apart)
//  - a cache's TTL is at most maxCacheTtlSeconds; a user owns at most MAX_OWNED_PER_USER live resources, interactions
//    not counted
// The operator password sees and may do everything; what it makes carries an OPERATOR_OWNER record, and a resource
// without one (made before the upgrade, or whose record failed) is the operator's too. No create ever replaces the
// record of another owner. Creations and deletions are logged with the user and key id.
import { randomUUID } from 'node:crypto'
import { fail } from '../../errors.ts'
import type { Logger } from '../../logger.ts'
import { parseJson } from '../../http/json-body.ts'
import { allowedResources } from '../../metering/limits-rule.ts'
import { checkTools, checkToolsUnread, toolsInBody } from './tool-policy.ts'
import type { LimitsByLevel, ResourceKind } from '../../metering/limits-rule.ts'
import type { OwnerRecord, OwnerStore } from '../../store/types.ts'
import type { ForwardResponse } from '../upstream/backend.ts'
import type { KeyCaller, ProxyCaller } from './caller.ts'
import { outputFilesIn, referencesIn, resourceTarget } from './resource-paths.ts'
import type { ResourceTarget } from './resource-paths.ts'
import { cacheInputTokens, fileInputTokens, referencedInputTokens } from './reservation.ts'
import type { UploadQuota } from './upload-quota.ts'

/** createProxy's default maxCacheTtlSeconds (GEMINI_MAX_CACHE_TTL_SECONDS): an hour, the upstream's own default TTL. */
export const DEFAULT_MAX_CACHE_TTL_SECONDS = 3600

/** Live owner records one user may hold, interactions not counted; a create past it is refused (TOO_MANY_RESOURCES). */
export const MAX_OWNED_PER_USER = 1000
/** The names of interactions' owner records. */
const INTERACTIONS_PREFIX = 'interactions/'
/** The names of records that count a create whose answer named nothing (countUnnamed); no resource has one. */
const UNNAMED_PREFIX = 'unnamed-create/'
/** The userId and keyId of a record of what the operator password made. */
export const OPERATOR_OWNER = 'operator'

const HOUR_MS = 3600_000
/**
 * How long an owner record lives: the resource's own life plus an hour, so a record never goes before its resource
 * (a record that went early makes the resource the operator's: refused to its creator, never shown to another).
 * Files live 48 h upstream; a resumable upload session a week; a cache until its expireTime; batches and
 * long-running operations are kept 30 days; an interaction as long as a batch, since the retention of a stored
 * interaction is not one the code can confirm (docs/interactions.md, "Owners").
 */
const RECORD_LIFE_MS = { files: 49 * HOUR_MS, uploads: 7 * 24 * HOUR_MS + HOUR_MS, caches: HOUR_MS, batches: 30 * 24 * HOUR_MS, interactions: 30 * 24 * HOUR_MS + HOUR_MS } as const
/**
 * Upstream pages one list request may read to find a page with something of the caller's: a page left empty would
 * still be valid (Google's lists allow short pages), but @google/genai's pager yields `undefined` for an empty page
 * that has a next one.
 */
const MAX_LIST_PAGES = 10
/** Largest answer read whole to record or filter it (a list page, a created resource); a larger one is refused. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024

/** What a kind covers, for the 403's message. */
const KIND_NAMES: Record<ResourceKind, string> = {
  files: 'files (uploads included)',
  caches: 'cached contents',
  batches: 'batches and long-running operations (predictLongRunning)',
}

export interface OwnershipOptions {
  /** Where owners are kept; none: keys own nothing, so every resource is the operator's. */
  owners?: OwnerStore
  /** The level table whose `allow` says which resource kinds keys may use. */
  byLevel: LimitsByLevel
  maxCacheTtlSeconds: number
  /** Upstream hosts besides googleapis.com whose URIs name files (a custom GEMINI_API_ENDPOINT's), lower case. */
  fileHosts?: readonly string[]
  /** Counts the bytes keys upload (lib/proxy/access/upload-quota.ts); none: uploads are not counted. */
  uploads?: UploadQuota
  now: () => Date
  logger?: Logger
}

/** A pass-through request admitted: the body to send, headers to lay over the client's, and the step after the answer. */
export interface Admitted {
  body: AsyncIterable<Uint8Array> | undefined
  /** The size of the body as read and checked here (a key's JSON body); undefined for one that streams on unread. */
  readBytes?: number
  /** The input tokens the files and caches the body names bring in (checkReferences), for the call's reservation. */
  referencedTokens?: number
  headers: Record<string, string>
  /**
   * Records what was created, forgets what was deleted, keeps only the caller's own in a list; the answer to send.
   * `nextPage` asks the upstream for the same list at another page token, to fill a page left empty.
   */
  settle (answer: ForwardResponse, nextPage?: (pageToken: string) => Promise<ForwardResponse>): Promise<ForwardResponse>
}

export interface Ownership {
  /**
   * Checks a pass-through request before anything is sent (403, 404, 400, 429), reading a JSON body a key sends;
   * `declaredBytes` is its Content-Length, which a key's upload must fit in the day's upload quota.
   */
  admit (caller: ProxyCaller, method: string, path: string, query: Record<string, string>, body: AsyncIterable<Uint8Array> | undefined, declaredBytes?: number): Promise<Admitted>
  /**
   * Refuses (404) a generate, stream or countTokens body that names a cache or file the caller does not own; answers
   * the input tokens those it names bring in (their records' inputTokens, each time named; 0 for the operator).
   */
  checkReferences (caller: ProxyCaller, body: unknown): Promise<number>
  /**
   * Refuses (404) a resource the gateway keeps owners of by name (`interactions/{id}`) that a key's user does not own;
   * the operator may use all. Answers the input tokens naming it brings in (its record's inputTokens, else 0).
   */
  checkOwned (caller: ProxyCaller, resource: string): Promise<number>
  /** Records (and logs) that `caller` created an interaction (`interactions/{id}`); `inputTokens`: its history's length once known. */
  createdInteraction (caller: ProxyCaller, resource: string, inputTokens?: number): Promise<void>
  /** Forgets (and logs) a resource deleted upstream. */
  deleted (caller: ProxyCaller, resource: string): Promise<void>
}

function notFound (name: string): Error {
  return fail('NOT_FOUND', `${name} is not found`)
}

async function readAll (body: AsyncIterable<Uint8Array> | undefined, limit: number): Promise<Buffer> {
  const chunks: Uint8Array[] = []
  let size = 0
  if (body !== undefined) {
    for await (const chunk of body) {
      size += chunk.length
      if (size > limit) throw fail('UPSTREAM_ERROR', 'The upstream answer is too large to check whose resources it holds')
      chunks.push(chunk)
    }
  }
  return Buffer.concat(chunks)
}

function oneChunk (bytes: Uint8Array): AsyncIterable<Uint8Array> {
  return (async function * once () { yield bytes })()
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A protobuf Duration as JSON writes it (`"3600s"`, `"1.5s"`), in seconds; undefined when it is not one. */
function durationSeconds (value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined
  const m = /^(\d{1,12})(?:\.(\d{1,9}))?s$/.exec(value)
  return m === null ? undefined : Number(m[1]) + (m[2] === undefined ? 0 : Number(`0.${m[2]}`))
}

/** What naming the one resource a create answers brings into a call: a file's size ÷ 4, a cache's totalTokenCount. */
function createdInputTokens (kind: ResourceKind, made: 'file' | 'files' | 'named' | 'upload', body: unknown): number | undefined {
  if (!isObject(body) || made === 'files' || kind === 'batches') return undefined
  if (kind === 'caches') return cacheInputTokens(body)
  return fileInputTokens((isObject(body.file) ? body.file : body).sizeBytes)
}

/** The JSON answer's names of what was created. */
function createdNames (made: 'file' | 'files' | 'named' | 'upload', body: unknown): string[] {
  if (!isObject(body)) return []
  if (made === 'files') return Array.isArray(body.files) ? body.files.flatMap(f => isObject(f) && typeof f.name === 'string' ? [f.name] : []) : []
  const item = made !== 'named' && isObject(body.file) ? body.file : body
  return typeof item.name === 'string' && item.name !== '' ? [item.name] : []
}

function unreadable (why: string): Error {
  return fail('UPSTREAM_ERROR', `The upstream answer could not be checked for whose resources it holds: ${why}`)
}

/** A 2xx answer the gateway must check, parsed; throws UPSTREAM_ERROR (502) for bytes that are not JSON (JSONP, protobuf). */
function checkable (bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'))
  } catch {
    throw unreadable('it is not JSON')
  }
}

/** A list page's items and next page token; throws UPSTREAM_ERROR (502) for anything not shaped as one. */
function listPage (parsed: unknown, field: string): { items: unknown[], nextPageToken?: string } {
  // An empty page may omit its items (Google leaves out empty lists), and the body altogether.
  if (parsed === undefined) return { items: [] }
  if (!isObject(parsed)) throw unreadable('a list page is not a JSON object')
  const items = parsed[field] ?? []
  const token = parsed.nextPageToken ?? ''
  if (!Array.isArray(items) || typeof token !== 'string') throw unreadable(`a list page's ${field} or nextPageToken is not what Google lists`)
  return token === '' ? { items } : { items, nextPageToken: token }
}

export function createOwnership (options: OwnershipOptions): Ownership {
  const { owners, byLevel, maxCacheTtlSeconds, now, logger, fileHosts = [], uploads } = options

  function logged (event: 'created' | 'deleted', caller: ProxyCaller, resource: string): void {
    const who = caller.kind === 'key' ? { userId: caller.userId, keyId: caller.keyId } : { userId: 'operator', keyId: null }
    logger?.info({ ...who, resource }, `upstream resource ${event}`)
  }

  /** Whether `userId` owns `name` now. */
  async function owns (userId: string, name: string): Promise<boolean> {
    return owners !== undefined && (await owners.get(name, now()))?.userId === userId
  }

  function checkAllowed (caller: KeyCaller, kind: ResourceKind): void {
    if (allowedResources(byLevel, caller.accessLevel).includes(kind)) return
    throw fail('RESOURCE_NOT_ALLOWED', `Keys of access level ${caller.accessLevel} may not use ${KIND_NAMES[kind]}; ask the operator to allow "${kind}" for this level`)
  }

  /** The expiry a cache's TTL asks for (`ttl` or `expireTime`, either spelling), refused past the maximum. */
  function cacheExpiry (body: Record<string, unknown>, creating: boolean): Date | undefined {
    const at = now().getTime()
    const ttl = body.ttl
    const expireTime = body.expireTime ?? body.expire_time
    let seconds: number | undefined
    if (ttl !== undefined) {
      seconds = durationSeconds(ttl)
      if (seconds === undefined) throw fail('INVALID_INPUT', 'ttl must be a duration in seconds such as "300s"')
    }
    if (expireTime !== undefined) {
      const end = typeof expireTime === 'string' ? Date.parse(expireTime) : Number.NaN
      if (Number.isNaN(end)) throw fail('INVALID_INPUT', 'expireTime must be an RFC 3339 timestamp')
      seconds = Math.max(seconds ?? 0, (end - at) / 1000)
    }
    // Without either, the upstream keeps a new cache an hour.
    if (seconds === undefined && creating) seconds = 3600
    if (seconds !== undefined && seconds > maxCacheTtlSeconds) {
      throw fail('INVALID_INPUT', `A cache may live at most ${maxCacheTtlSeconds} seconds on this gateway; ask for a shorter ttl`)
    }
    return seconds === undefined ? undefined : new Date(at + seconds * 1000)
  }

  /** When the record of a resource of `kind` made now goes; a cache's from the expireTime its answer gives. */
  function recordExpiry (kind: ResourceKind | 'uploads', answer: unknown, asked: Date | undefined): Date {
    const at = now().getTime()
    if (kind !== 'caches') return new Date(at + RECORD_LIFE_MS[kind])
    const end = isObject(answer) && typeof answer.expireTime === 'string' ? Date.parse(answer.expireTime) : Number.NaN
    const until = Number.isNaN(end) ? (asked?.getTime() ?? at + maxCacheTtlSeconds * 1000) : end
    return new Date(Math.max(until, at) + RECORD_LIFE_MS.caches)
  }

  async function record (caller: ProxyCaller, resource: string, expiresAt: Date, inputTokens?: number): Promise<void> {
    if (owners === undefined) return logged('created', caller, resource)
    try {
      const userId = caller.kind === 'key' ? caller.userId : OPERATOR_OWNER
      // A record is never replaced: an answer naming what someone holds (a name reused, an output) hands nothing over.
      const held = await owners.get(resource, now())
      if (held !== null) {
        if (held.userId !== userId) logger?.warn({ resource, owner: held.userId, caller: userId }, 'upstream answer names a resource another owner holds: its record kept')
        return
      }
      logged('created', caller, resource)
      await owners.put({ resource, userId, keyId: caller.kind === 'key' ? caller.keyId : OPERATOR_OWNER, createdAt: now(), expiresAt, ...(inputTokens === undefined ? {} : { inputTokens }) })
    } catch (err) {
      // The resource exists upstream all the same: without its record it is the operator's, never anyone else's.
      logger?.error({ err, resource }, 'upstream resource owner not recorded')
    }
  }

  async function checkReferences (caller: ProxyCaller, body: unknown): Promise<number> {
    if (caller.kind !== 'key') return 0
    const named = referencesIn(body, fileHosts).map(ref => ref.name)
    const names = [...new Set(named)]
    if (names.length === 0) return 0
    // One store read for the whole body, however many requests a batch holds.
    const mine = new Map((owners === undefined ? [] : await owners.getMany(names, now())).filter(o => o.userId === caller.userId).map(o => [o.resource, o]))
    const foreign = names.find(name => !mine.has(name))
    if (foreign !== undefined) throw notFound(foreign)
    return referencedInputTokens(named.map(name => mine.get(name) as OwnerRecord))
  }

  /** The items of a list page that are the caller's. */
  async function ownItems (caller: ProxyCaller, items: unknown[]): Promise<unknown[]> {
    const names = items.flatMap(i => isObject(i) && typeof i.name === 'string' ? [i.name] : [])
    const mine = new Set((owners === undefined || names.length === 0 ? [] : await owners.getMany(names, now())).filter(o => caller.kind === 'key' && o.userId === caller.userId).map(o => o.resource))
    return items.filter(i => isObject(i) && typeof i.name === 'string' && mine.has(i.name))
  }

  /**
   * A key's create the upstream accepted (2xx) but whose answer names nothing the gateway could record (it did not
   * parse, or is not shaped as Google answers): the resource may exist all the same, so a record of no resource
   * counts it against the user's MAX_OWNED_PER_USER for as long as the resource could live.
   */
  async function countUnnamed (caller: ProxyCaller, kind: ResourceKind, askedExpiry: Date | undefined): Promise<void> {
    if (caller.kind !== 'key' || owners === undefined) return
    const resource = `${UNNAMED_PREFIX}${randomUUID()}`
    await owners.put({ resource, userId: caller.userId, keyId: caller.keyId, createdAt: now(), expiresAt: recordExpiry(kind, undefined, askedExpiry) })
      .catch((err: unknown) => logger?.error({ err, resource }, 'unnamed upstream resource not counted'))
  }

  async function settleAnswer (caller: ProxyCaller, method: string, target: ResourceTarget, answer: ForwardResponse, askedExpiry: Date | undefined, nextPage: ((pageToken: string) => Promise<ForwardResponse>) | undefined): Promise<ForwardResponse> {
    if (target.op !== 'create' || answer.status < 200 || answer.status >= 300) return await settleChecked(caller, method, target, answer, askedExpiry, nextPage)
    let named = false
    try {
      return await settleChecked(caller, method, target, answer, askedExpiry, nextPage, () => { named = true })
    } finally {
      if (!named) await countUnnamed(caller, target.kind, askedExpiry)
    }
  }

  async function settleChecked (caller: ProxyCaller, method: string, target: ResourceTarget, answer: ForwardResponse, askedExpiry: Date | undefined, nextPage: ((pageToken: string) => Promise<ForwardResponse>) | undefined, recorded?: () => void): Promise<ForwardResponse> {
    const ok = answer.status >= 200 && answer.status < 300
    if (!ok || target.op === 'model' || target.op === 'other') return answer
    if (target.op === 'item') {
      if (method === 'DELETE') {
        logged('deleted', caller, target.name)
        await owners?.delete(target.name).catch((err: unknown) => logger?.error({ err, resource: target.name }, 'upstream resource owner not removed'))
        return answer
      }
      const upload = target.name.startsWith('uploads/')
      const patching = method === 'PATCH' && target.kind === 'caches'
      const polling = method === 'GET' && target.kind === 'batches' && caller.kind === 'key'
      if (!upload && !patching && !polling) return answer
    }
    if (target.op === 'list' && caller.kind !== 'key') return answer
    const bytes = await readAll(answer.body, MAX_ANSWER_BYTES)
    // Fail closed: an answer that must be checked and cannot be read never reaches the client (a 502).
    const parsed = bytes.length === 0 ? undefined : checkable(bytes)
    const same = { ...answer, body: oneChunk(bytes) }
    if (target.op === 'list') {
      // Only the caller's own items, and nothing else of the page but its token, so paging goes on over the upstream's pages.
      let page = listPage(parsed, target.field)
      let kept = await ownItems(caller, page.items)
      for (let read = 1; kept.length === 0 && nextPage !== undefined && read < MAX_LIST_PAGES && page.nextPageToken !== undefined; read++) {
        const more = await nextPage(page.nextPageToken)
        if (more.status < 200 || more.status >= 300) return more
        page = listPage(checkable(await readAll(more.body, MAX_ANSWER_BYTES)), target.field)
        kept = await ownItems(caller, page.items)
      }
      const filtered = Buffer.from(JSON.stringify({ [target.field]: kept, ...(page.nextPageToken === undefined ? {} : { nextPageToken: page.nextPageToken }) }))
      const headers = { ...answer.headers }
      delete headers['content-length']
      return { ...answer, headers, body: oneChunk(filtered) }
    }
    if (target.op === 'item') {
      if (target.kind === 'batches') {
        // What the caller's batch or operation produced (its results file, a video) is the caller's (record keeps any held one).
        for (const name of outputFilesIn(parsed, fileHosts)) await record(caller, name, recordExpiry('files', undefined, undefined))
        return same
      }
      if (target.kind === 'caches') {
        // A TTL changed: the record follows the cache's new expiry.
        const current = await owners?.get(target.name, now())
        if (current != null) await owners!.put({ ...current, expiresAt: recordExpiry('caches', parsed, askedExpiry) })
        return same
      }
      // A resumable upload's last request answers the file made.
      for (const name of createdNames('upload', parsed)) await record(caller, name, recordExpiry('files', parsed, undefined), createdInputTokens('files', 'upload', parsed))
      if (answer.headers['x-goog-upload-status'] === 'final') await owners?.delete(target.name).catch(() => {})
      return same
    }
    if (target.made === 'upload') {
      const uploadUrl = answer.headers['x-goog-upload-url']
      const uploadId = uploadUrl === undefined ? null : new URL(uploadUrl, 'http://upstream').searchParams.get('upload_id')
      if (uploadId !== null && uploadId !== '') {
        await record(caller, `uploads/${uploadId}`, recordExpiry('uploads', undefined, undefined))
        recorded?.()
      }
    }
    const made = target.made === 'upload' ? 'upload' : target.made
    for (const name of createdNames(made, parsed)) {
      await record(caller, name, recordExpiry(target.kind, parsed, askedExpiry), createdInputTokens(target.kind, made, parsed))
      recorded?.()
    }
    return same
  }

  return {
    checkReferences,

    async checkOwned (caller, resource) {
      if (caller.kind !== 'key') return 0
      const held = owners === undefined ? null : await owners.get(resource, now())
      if (held?.userId !== caller.userId) throw notFound(resource)
      return held.inputTokens ?? 0
    },

    async createdInteraction (caller, resource, inputTokens) {
      // A stream's interaction is recorded at its first event, and its history's length kept once it completed.
      const held = caller.kind === 'key' && inputTokens !== undefined ? await owners?.get(resource, now()) : undefined
      if (held != null && caller.kind === 'key' && held.userId === caller.userId) {
        await owners!.put({ ...held, inputTokens }).catch((err: unknown) => logger?.error({ err, resource }, 'upstream resource owner not updated'))
        return
      }
      await record(caller, resource, new Date(now().getTime() + RECORD_LIFE_MS.interactions), inputTokens)
    },

    async deleted (caller, resource) {
      logged('deleted', caller, resource)
      await owners?.delete(resource).catch((err: unknown) => logger?.error({ err, resource }, 'upstream resource owner not removed'))
    },

    async admit (caller, method, path, query, given, declaredBytes) {
      const target = resourceTarget(method, path, query.upload_id)
      const pass = (sent: AsyncIterable<Uint8Array> | undefined, headers: Record<string, string> = {}, askedExpiry?: Date, readBytes?: number): Admitted =>
        ({ body: sent, headers, readBytes, settle: (answer, nextPage) => settleAnswer(caller, method, target, answer, askedExpiry, nextPage) })
      if (caller.kind !== 'key') return pass(given)
      if (target.op === 'other') {
        throw fail('RESOURCE_NOT_ALLOWED', `${target.what} is not available to keys: only models, files, cachedContents, batches and operations pass through for them`)
      }
      if (target.op !== 'model') checkAllowed(caller, target.kind)
      if (target.op === 'item' && !await owns(caller.userId, target.name)) throw notFound(target.name)
      // Interactions are left out: their creation is a model call, held by the token limits, and an agent makes one a turn.
      if (target.op === 'create' && owners !== undefined && await owners.countByUser(caller.userId, now(), INTERACTIONS_PREFIX) >= MAX_OWNED_PER_USER) {
        throw fail('TOO_MANY_RESOURCES', `This user owns ${MAX_OWNED_PER_USER} upstream resources, as many as allowed; delete some first`)
      }
      if (target.op === 'create' && owners === undefined) throw fail('RESOURCE_NOT_ALLOWED', 'This proxy keeps no owner records (createProxy resources.owners), so keys cannot create upstream resources')
      const writes = method === 'POST' || method === 'PATCH' || method === 'PUT'
      // Upload bytes are counted against the user's day (lib/proxy/access/upload-quota.ts) as they stream on, unread.
      const body = writes && path.startsWith('/upload/') && uploads !== undefined ? await uploads.meter(caller, declaredBytes, given) : given
      if (!writes || path.startsWith('/upload/')) return pass(body)
      // A key's JSON body is read whole (the route bounds its size) and checked as parsed; what goes upstream is the
      // value checked, serialised again, so no spelling the upstream might read otherwise (a repeated key) passes.
      const bytes = await readAll(body, Number.MAX_SAFE_INTEGER)
      const text = bytes.toString('utf8')
      const parsed = text.trim() === '' ? {} : parseJson(text)
      if (!isObject(parsed)) throw fail('INVALID_INPUT', 'The request body must be a JSON object')
      // A cache's or a batch's tools are sent later, on the upstream's side: they are held to the level's tools now.
      checkTools(byLevel, caller, toolsInBody(parsed))
      if (target.op === 'create' && target.kind === 'batches' && referencesIn(parsed, fileHosts).some(ref => ref.field.replace(/_/g, '').toLowerCase() === 'filename')) checkToolsUnread(byLevel, caller)
      const referencedTokens = await checkReferences(caller, parsed)
      const cacheCreate = target.op === 'create' && target.kind === 'caches'
      const cachePatch = target.op === 'item' && target.kind === 'caches' && method === 'PATCH'
      const askedExpiry = cacheCreate || cachePatch ? cacheExpiry(parsed, cacheCreate) : undefined
      const sent = Buffer.from(JSON.stringify(parsed))
      return { ...pass(oneChunk(sent), { 'content-length': String(sent.length) }, askedExpiry, bytes.length), referencedTokens }
    },
  }
}
