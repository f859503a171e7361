// Which pooled credential created a resource (a file, a cache, a batch, an upload session): the Gemini API answers a
// file uploaded through key #1 with 403 through key #2, so every later call naming it goes through the credential
// that made it (docs/upstream-protocol.md, "Credential pools"). The map is bounded by count and by age, so a
// long-running gateway does not grow with every upload.

export const RESOURCE_PIN_DEFAULTS = {
  /** Most resources remembered; the oldest is forgotten first. */
  maxEntries: 10_000,
  /** How long a resource is remembered: 48 h, the life of a Gemini API file (longer-lived caches and batches past it fail over like any call). */
  maxAgeMs: 48 * 3600_000,
} as const

export interface ResourcePins {
  /** Remembers that `credential` created `resource`. */
  pin (resource: string, credential: string): void
  /** The credential that created the first remembered resource of `resources`, or undefined. */
  credentialFor (resources: Iterable<string>): string | undefined
  readonly size: number
}

export function createResourcePins (options: { maxEntries?: number, maxAgeMs?: number, now?: () => Date } = {}): ResourcePins {
  const maxEntries = options.maxEntries ?? RESOURCE_PIN_DEFAULTS.maxEntries
  const maxAgeMs = options.maxAgeMs ?? RESOURCE_PIN_DEFAULTS.maxAgeMs
  const now = (): number => (options.now?.() ?? new Date()).getTime()
  // Insertion order is age order: a re-pinned resource moves to the end.
  const pins = new Map<string, { credential: string, at: number }>()
  return {
    pin (resource, credential) {
      pins.delete(resource)
      pins.set(resource, { credential, at: now() })
      for (const oldest of pins.keys()) {
        if (pins.size <= maxEntries) break
        pins.delete(oldest)
      }
    },
    credentialFor (resources) {
      const at = now()
      for (const resource of resources) {
        const pin = pins.get(resource)
        if (pin === undefined) continue
        if (at - pin.at > maxAgeMs) {
          pins.delete(resource)
          continue
        }
        return pin.credential
      }
      return undefined
    },
    get size () { return pins.size },
  }
}

/** A Gemini API resource name at the end of a name or URI: `files/abc`, `https://…/v1beta/files/abc`, `cachedContents/x`, `batches/y`, `interactions/z`. */
const RESOURCE = /(?:^|\/)((?:files|cachedContents|batches|interactions)\/[A-Za-z0-9._-]+)$/

export function resourceName (value: unknown): string | undefined {
  return typeof value === 'string' ? RESOURCE.exec(value)?.[1] : undefined
}

/** The resources a generate/countTokens request names: `cachedContent` and every part's `fileData.fileUri`, nested requests included. */
export function resourcesInRequest (request: unknown): string[] {
  const found: string[] = []
  const walk = (value: unknown, depth: number): void => {
    if (depth > 8 || value === null || typeof value !== 'object') return
    if (Array.isArray(value)) {
      for (const item of value) walk(item, depth + 1)
      return
    }
    const object = value as Record<string, unknown>
    const named = resourceName(object.cachedContent) ?? resourceName((object.fileData as { fileUri?: unknown } | undefined)?.fileUri)
    if (named !== undefined) found.push(named)
    for (const key of ['contents', 'parts', 'generateContentRequest', 'requests', 'content']) walk(object[key], depth + 1)
  }
  walk(request, 0)
  return found
}

/** The resources a forwarded path and query name: `/v1beta/files/abc`, `/v1beta/cachedContents/x:…`, `/v1beta/interactions/y/cancel`, an upload session's `upload_id`. */
export function resourcesInPath (path: string, query: string): string[] {
  const found: string[] = []
  const m = /\/v1(?:beta)?\/((?:files|cachedContents|batches|interactions)\/[A-Za-z0-9._-]+)/.exec(path)
  if (m !== null) found.push(m[1])
  const upload = new URLSearchParams(query.startsWith('?') ? query.slice(1) : query).get('upload_id')
  if (upload !== null && upload !== '') found.push(uploadSession(upload))
  return found
}

/** The pin key of a resumable upload session. */
export function uploadSession (id: string): string {
  return `upload:${id}`
}

/** The resources an answer to a create names: its `name`, a file's `file.name`, an operation's `response.name`. */
export function resourcesInAnswer (answer: unknown): string[] {
  if (answer === null || typeof answer !== 'object') return []
  const a = answer as Record<string, any>
  return [a.name, a.file?.name, a.response?.name].map(resourceName).filter((r): r is string => r !== undefined)
}

/** Creating an interaction (`POST /v1beta/interactions`): its answer names what to pin, its body what it continues. */
export const INTERACTION_CREATE = /^\/v1(?:beta)?\/interactions\/?$/

/** Content types of the Interactions API whose `uri` may name an uploaded file. */
const MEDIA_TYPES = new Set(['image', 'audio', 'video', 'document'])

/** The `uri` of every media content item (`{type: 'image' | 'audio' | 'video' | 'document', uri}`) in an interaction's body, at any depth. */
export function mediaUrisIn (body: unknown): string[] {
  const found: string[] = []
  const walk = (value: unknown, depth: number): void => {
    if (depth > 16 || value === null || typeof value !== 'object') return
    if (Array.isArray(value)) {
      for (const item of value) walk(item, depth + 1)
      return
    }
    const object = value as Record<string, unknown>
    if (typeof object.type === 'string' && MEDIA_TYPES.has(object.type) && typeof object.uri === 'string') found.push(object.uri)
    for (const key in object) walk(object[key], depth + 1)
  }
  walk(body, 0)
  return found
}

/** The interaction a create's body continues (`previous_interaction_id`) and the files its media name, as pin keys. */
export function resourcesInInteraction (body: unknown): string[] {
  const previous = body !== null && typeof body === 'object' ? (body as { previous_interaction_id?: unknown }).previous_interaction_id : undefined
  const files = mediaUrisIn(body).map(resourceName).filter((r): r is string => r !== undefined)
  return [...(typeof previous === 'string' && /^[A-Za-z0-9._-]+$/.test(previous) ? [`interactions/${previous}`] : []), ...files]
}

/** The interaction an answer or a stream event names: an Interaction's `id`, an event's `interaction.id` or `interaction_id`. */
export function interactionNamed (value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined
  const v = value as Record<string, any>
  const id: unknown = v.interaction?.id ?? v.interaction_id ?? v.id
  return typeof id === 'string' && /^[A-Za-z0-9._-]+$/.test(id) ? `interactions/${id}` : undefined
}
