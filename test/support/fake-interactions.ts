// Google's Interactions API as test/support/fake-upstream.ts serves it (call 'interactions'), after the shapes the
// official @google/genai SDK reads (its Interaction, Usage and InteractionSSEEvent types) and Google's overview
// (ai.google.dev/gemini-api/docs/interactions):
//
//   POST /v1beta/interactions (and /v1)  {model, input, previous_interaction_id?, stream?, store?, continuation_token?}
//        → an Interaction: {id, object: 'interaction', model, status, created, updated, steps: [{type: 'model_output',
//          content: [{type: 'text', text}]}], usage: {total_input_tokens, total_output_tokens, total_thought_tokens,
//          total_tokens}}; the create answer holds only the model's steps, the stored one (GET) the user's input too
//        stream: true → SSE events, in order: interaction.created, interaction.status_update (in_progress), step.start,
//          step.delta (text), step.stop, interaction.completed (the interaction with its usage)
//   GET /v1beta/interactions/{id}         the stored interaction (stream=true: its events again)
//   DELETE /v1beta/interactions/{id}      {} ; POST /v1beta/interactions/{id}/cancel: the interaction, status cancelled
//   An unknown id (or, with fake.keyScoped, one another key created) is 404 NOT_FOUND (Google's status and error shape;
//   the message text is the fake's own, no page quoting Google's was found); an unknown previous_interaction_id
//   too; a model outside fake.listedModels or gemini-4-* is 404 as for generateContent; store: false keeps nothing.
//   Long decode (fake.decodeTokens on a gemini-4-* model): one call writes at most 65,536 output tokens; a call that
//   stops there ends with status requires_continuation and a continuation_token, which the next create sends back with
//   previous_interaction_id set to that interaction (the SDK's automatic continuation), and no input.
//   Usage counts: input = words of the input text (at least 1), output = a token per 4 characters (long decode: per word).
import type { FakeReply, FakeRequest } from './fake-upstream.ts'
import { errorReply } from './fake-upstream.ts'

export interface FakeInteractions {
  /** Stored interactions by id, with the key that created them and the input they were given. */
  stored: Map<string, { interaction: Record<string, unknown>, key: string, input: unknown }>
}

export function newFakeInteractions (): FakeInteractions {
  return { stored: new Map() }
}

const PATH = /^\/v1(?:beta)?\/interactions(?:\/([^/]+)(\/cancel)?)?$/

export function isInteractionsPath (path: string): boolean {
  return PATH.test(path)
}

/** Output tokens one call writes at most before asking to be continued. */
const PER_CALL = 65536

let counter = 0

function words (value: unknown): number {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? '')
  return Math.max(1, text.split(/\s+/).filter(w => w !== '').length)
}

function notFound (id: string): FakeReply {
  return errorReply(404, { message: `Interaction ${id} not found.` })
}

export interface InteractionOptions {
  keyScoped: boolean
  decodeTokens: number | undefined
  /** Whether the Gemini API serves this model. */
  serves: (model: string) => boolean
  text: string
}

/** The events of an interaction, in Google's order. */
function eventsOf (interaction: Record<string, any>): unknown[] {
  const text = String(interaction.steps?.[0]?.content?.[0]?.text ?? '')
  const { steps, usage, ...head } = interaction
  return [
    { event_type: 'interaction.created', interaction: { ...head, status: 'in_progress' }, event_id: 'e1' },
    { event_type: 'interaction.status_update', interaction_id: interaction.id, status: 'in_progress', event_id: 'e2' },
    { event_type: 'step.start', index: 0, step: { type: 'model_output', content: [] }, event_id: 'e3' },
    { event_type: 'step.delta', index: 0, delta: { type: 'text', text }, event_id: 'e4' },
    { event_type: 'step.stop', index: 0, event_id: 'e5' },
    { event_type: 'interaction.completed', interaction: { ...head, usage }, event_id: 'e6' },
  ]
}

export function interactionReply (rec: FakeRequest, state: FakeInteractions, options: InteractionOptions): FakeReply | undefined {
  const m = PATH.exec(rec.path)
  if (m === null || rec.api !== 'gemini-api') return undefined
  const key = String(rec.headers['x-goog-api-key'] ?? rec.query.key ?? '')
  const [, id, cancel] = m
  const visible = (name: string): FakeInteractions['stored'] extends Map<string, infer V> ? V | undefined : never => {
    const found = state.stored.get(name)
    return found === undefined || (options.keyScoped && found.key !== key) ? undefined : found
  }
  if (id !== undefined) {
    const found = visible(id)
    if (found === undefined) return notFound(id)
    if (cancel !== undefined) {
      if (rec.method !== 'POST') return errorReply(405)
      found.interaction.status = 'cancelled'
      return { body: found.interaction }
    }
    if (rec.method === 'DELETE') {
      state.stored.delete(id)
      return { body: {} }
    }
    if (rec.method !== 'GET') return errorReply(405)
    if (rec.query.stream === 'true') return { chunks: eventsOf(found.interaction) }
    const steps = [{ type: 'user_input', content: [{ type: 'text', text: typeof found.input === 'string' ? found.input : JSON.stringify(found.input ?? '') }] }, ...(found.interaction.steps as unknown[])]
    return { body: { ...found.interaction, steps } }
  }
  if (rec.method !== 'POST') return errorReply(405)
  const body = rec.body !== null && typeof rec.body === 'object' ? rec.body : {}
  const model = typeof body.model === 'string' ? body.model.replace(/^models\//, '') : ''
  if (!options.serves(model)) return errorReply(404, { message: `models/${model} is not found for API version v1beta, or is not supported for interactions.` })
  const previous = body.previous_interaction_id
  if (previous !== undefined && visible(String(previous)) === undefined) return notFound(String(previous))
  let already = 0
  const token = body.continuation_token
  if (token !== undefined) {
    const at = typeof token === 'string' ? /^fake-ict-(\d+)$/.exec(token) : null
    if (at === null) return errorReply(400, { message: 'Invalid continuation_token.' })
    already = Number(at[1])
  }
  let written = Math.ceil(options.text.length / 4)
  let status = 'completed'
  let continuation: string | undefined
  let text = options.text
  if (options.decodeTokens !== undefined && model.startsWith('gemini-4-')) {
    written = Math.min(PER_CALL, options.decodeTokens - already)
    text = Array.from({ length: written }, () => 'w').join(' ')
    if (already + written < options.decodeTokens) {
      status = 'requires_continuation'
      continuation = `fake-ict-${already + written}`
    }
  }
  const newId = `v1_fake${++counter}`
  const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const input = words(body.input)
  const interaction: Record<string, unknown> = {
    id: newId,
    object: 'interaction',
    model,
    status,
    created: stamp,
    updated: stamp,
    ...(previous === undefined ? {} : { previous_interaction_id: previous }),
    ...(continuation === undefined ? {} : { continuation_token: continuation }),
    steps: [{ type: 'model_output', content: [{ type: 'text', text }] }],
    usage: { total_input_tokens: input, total_output_tokens: written, total_thought_tokens: 0, total_tokens: input + written },
  }
  if (body.store !== false) state.stored.set(newId, { interaction, key, input: body.input })
  if (body.stream === true) return { chunks: eventsOf(interaction) }
  return { body: interaction }
}
