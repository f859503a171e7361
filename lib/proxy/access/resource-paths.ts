// What a pass-through path does with the upstream resources the gateway records owners of (files, uploads, cached
// contents, batches, operations), and which resources a request body names (docs/model-proxy.md, "Upstream
// resources and their owners"). Names are the ones clients see; collections and actions are matched
// case-insensitively, so a case variant is judged as what it names, never waved through.
import type { ResourceKind } from '../../metering/limits-rule.ts'

/** A collection the gateway lists for its callers, and the field of its list answer holding the items. */
export interface ListTarget { op: 'list', kind: ResourceKind, field: string }
/** A request that creates resources: their kind, and where their names are in the answer. */
export interface CreateTarget { op: 'create', kind: ResourceKind, made: 'file' | 'files' | 'named' | 'upload' }
/** A request on one resource (`files/abc`, `models/m/operations/o`). */
export interface ItemTarget { op: 'item', kind: ResourceKind, name: string }
/** A model call that creates nothing (embedContent, predict, ...): only the resources its body names are checked. */
export interface ModelTarget { op: 'model' }
/** Any other path: a resource the gateway keeps no owners of. */
export interface OtherTarget { op: 'other', what: string }

export type ResourceTarget = ListTarget | CreateTarget | ItemTarget | ModelTarget | OtherTarget

/** Model actions that start a long-running resource: each answers an Operation named `batches/{id}` or `models/{m}/operations/{id}`. */
const LONG_RUNNING = new Set(['batchgeneratecontent', 'asyncbatchembedcontent', 'predictlongrunning'])

const API_PREFIX = /^\/(upload\/)?v1(?:beta)?\//

/** The resource name of `collection/{id}` (an id's `:verb` dropped). */
function named (collection: string, id: string): string {
  const colon = id.indexOf(':')
  return `${collection}/${colon < 0 ? id : id.slice(0, colon)}`
}

/** What `method path` (a checked pass-through path, `/v1beta/...` or `/upload/v1beta/...`) does; `uploadId` is the query's upload_id. */
export function resourceTarget (method: string, path: string, uploadId: string | undefined): ResourceTarget {
  const prefix = API_PREFIX.exec(path)
  const segments = path.slice(prefix?.[0].length ?? 0).split('/').map(s => decodeURIComponent(s))
  const head = segments[0].toLowerCase()
  const [collection, verb] = head.split(':')
  const post = method === 'POST'
  if (prefix?.[1] !== undefined) {
    // Uploads: a start (resumable) or a whole upload, then the resumable session's further requests by upload_id.
    if (collection !== 'files' || segments.length !== 1) return { op: 'other', what: `upload ${segments[0]}` }
    if (uploadId !== undefined) return { op: 'item', kind: 'files', name: `uploads/${uploadId}` }
    return { op: 'create', kind: 'files', made: 'upload' }
  }
  if (collection === 'files' || collection === 'cachedcontents' || collection === 'batches' || collection === 'operations') {
    const kind: ResourceKind = collection === 'files' ? 'files' : collection === 'cachedcontents' ? 'caches' : 'batches'
    const canonical = collection === 'cachedcontents' ? 'cachedContents' : collection
    if (segments.length === 1 && verb === undefined) {
      if (method === 'GET') return { op: 'list', kind, field: collection === 'batches' ? 'operations' : canonical }
      if (post && kind !== 'batches') return { op: 'create', kind, made: kind === 'files' ? 'file' : 'named' }
      return { op: 'other', what: `${method} ${canonical}` }
    }
    if (segments.length === 1 && collection === 'files' && verb === 'register' && post) return { op: 'create', kind: 'files', made: 'files' }
    if (segments.length === 2 && segments[1] !== '') return { op: 'item', kind, name: named(canonical, segments[1]) }
    return { op: 'other', what: segments.join('/') }
  }
  if (collection === 'models' && segments.length === 2) {
    const action = segments[1].split(':')[1]?.toLowerCase()
    if (action !== undefined && LONG_RUNNING.has(action)) return { op: 'create', kind: 'batches', made: 'named' }
    return { op: 'model' }
  }
  if (collection === 'models' && segments.length >= 3 && segments[2].toLowerCase() === 'operations') {
    if (segments.length === 3 && method === 'GET') return { op: 'list', kind: 'batches', field: 'operations' }
    if (segments.length === 4) return { op: 'item', kind: 'batches', name: `models/${segments[1]}/operations/${named('', segments[3]).slice(1)}` }
  }
  return { op: 'other', what: segments[0] === '' ? path : segments[0].split(':')[0] }
}

/**
 * A reference a request body makes to a resource: a cache (`cachedContent`), a file (`fileData.fileUri`, a batch's
 * `inputConfig.fileName`), or one nothing records an owner of (`fileSearch.fileSearchStoreNames`, files:register's `uris`).
 */
export interface Reference { field: string, name: string }

/** Free-form values inside a request (a function call's args, a function's answer, labels): their strings name nothing. */
export const FREE_FORM = new Set(['args', 'response', 'labels', 'example', 'default', 'enum'])

const GOOGLE_BASE = 'https://generativelanguage.googleapis.com/v1beta/'

/**
 * The `files/{id}` a file reference names: `files/x`, `/v1beta/files/x`, or a full Google URI
 * (`https://generativelanguage.googleapis.com/v1beta/files/x`, any googleapis.com host, any case, encoded or with dot
 * segments), or a URI on one of `hosts` (the upstream hosts the gateway is configured with, a custom endpoint's);
 * undefined for an http(s) URL of another host (a YouTube or public URL the upstream fetches itself). A Google URI
 * that names no file, or another scheme (gs://), becomes a name nobody owns, refused like someone else's.
 */
export function fileName (reference: string, hosts: readonly string[] = []): string | undefined {
  let url: URL
  try {
    url = new URL(reference, GOOGLE_BASE)
  } catch {
    return `files/${reference}`
  }
  const web = url.protocol === 'https:' || url.protocol === 'http:'
  if (web && !/(^|\.)googleapis\.com$/i.test(url.hostname) && !hosts.includes(url.hostname.toLowerCase())) return undefined
  // Another scheme (gs://, data:) names nothing the gateway recorded: nobody owns it.
  if (!web) return `files/${reference}`
  let segments: string[]
  try {
    segments = url.pathname.split('/').filter(s => s !== '').map(s => decodeURIComponent(s))
  } catch {
    return `files/${reference}`
  }
  const at = segments.lastIndexOf('files')
  if (at < 0 || at !== segments.length - 2) return `files/${reference}`
  return named('files', segments[at + 1])
}

/** The cache a `cachedContent` value names (`cachedContents/x`, or a bare id). */
function cacheName (reference: string): string {
  return /^cachedContents\//i.test(reference) ? `cachedContents/${reference.slice('cachedContents/'.length)}` : `cachedContents/${reference}`
}

/** Every resource a request body names, wherever it sits (generate, countTokens' generateContentRequest, a batch's requests, a cache's contents), in either field spelling (`fileUri`, `file_uri`). */
export function referencesIn (body: unknown, hosts: readonly string[] = []): Reference[] {
  const found: Reference[] = []
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item)
      return
    }
    if (value === null || typeof value !== 'object') return
    for (const [key, inner] of Object.entries(value)) {
      const field = key.replace(/_/g, '').toLowerCase()
      if (FREE_FORM.has(field)) continue
      // File Search stores and files:register's Cloud Storage URIs have no owner records: nobody's, so a key's name is refused.
      const unowned = field === 'filesearchstorenames' ? 'fileSearchStores/' : field === 'uris' ? 'uris/' : undefined
      if (unowned !== undefined) {
        for (const item of Array.isArray(inner) ? inner : [inner]) found.push({ field: key, name: typeof item === 'string' ? `${unowned}${item}` : `${unowned}${JSON.stringify(item)}` })
        continue
      }
      if (typeof inner === 'string') {
        if (field === 'cachedcontent') found.push({ field: key, name: cacheName(inner) })
        else if (field === 'fileuri' || field === 'filename') {
          const name = fileName(inner, hosts)
          if (name !== undefined) found.push({ field: key, name })
        }
      } else {
        walk(inner)
      }
    }
  }
  walk(body)
  return found
}

/** A value at a path of plain keys (`a.b`), an array item by item; strings only. */
function stringsAt (value: unknown, path: string[]): string[] {
  if (Array.isArray(value)) return value.flatMap(item => stringsAt(item, path))
  if (path.length === 0) return typeof value === 'string' ? [value] : []
  if (value === null || typeof value !== 'object') return []
  return stringsAt((value as Record<string, unknown>)[path[0]], path.slice(1))
}

/**
 * Where Google's answers name what a batch or a long-running operation produced (ai.google.dev/api: batch-mode,
 * video): a batch's results file (GenerateContentBatch / EmbedContentBatch `output.responsesFile`, as metadata or
 * as the done response), and a video operation's generated samples. Nothing else: a batch's metadata echoes what
 * its creator sent and its inlined responses are model output, so a name found there could be anyone's.
 */
const OUTPUT_PATHS = [
  'metadata.output.responsesFile',
  'response.output.responsesFile',
  'response.responsesFile',
  'response.generateVideoResponse.generatedSamples.video.uri',
].map(path => path.split('.'))

/**
 * The files a batch or operation answer names as its output, read at Google's documented paths only (OUTPUT_PATHS);
 * `hosts`: the other hosts whose URIs name the gateway's files (fileName).
 */
export function outputFilesIn (answer: unknown, hosts: readonly string[] = []): string[] {
  const found = new Set<string>()
  for (const path of OUTPUT_PATHS) {
    for (const value of stringsAt(answer, path)) {
      const name = fileName(value, hosts)
      if (name !== undefined && /^files\/[A-Za-z0-9_-]+$/.test(name)) found.add(name)
    }
  }
  return [...found]
}
