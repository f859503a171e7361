// An interaction's answer passed through to the client, read as it goes (docs/interactions.md, "Usage"): the id of
// the interaction created (recorded as its owner's before the client can name it) and the usage the upstream
// reports, which settles the call. A JSON answer is one Interaction; a stream is SSE events whose `usage`,
// `interaction.usage` and `metadata.total_usage` are running totals (the last one counts). Its Google Search
// queries are the usage's own count, else those its google_search_call steps name (docs/prices.md).
import type { TokenUsage } from '../../metering/token-usage.ts'
import type { AnswerReader } from '../call/lifecycle.ts'
import { createSseDecoder } from '../upstream/sse.ts'
import { interactionStepSearches, readInteractionUsage } from '../gemini/hub.ts'

/** Largest JSON answer or SSE event read for its id and usage; a larger one passes on unread (its call charged as if it reported none). */
const MAX_READ_BYTES = 8 * 1024 * 1024

const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** `searches`: the search queries of each google_search_call step by its index (a stream repeats a step: the most seen). */
interface Seen { id?: string, usage?: TokenUsage, chars: number, failed: boolean, searches: Map<number, number> }

function sawStep (seen: Seen, index: unknown, step: unknown): void {
  const n = interactionStepSearches(step)
  if (n === 0 || typeof index !== 'number') return
  seen.searches.set(index, Math.max(n, seen.searches.get(index) ?? 0))
}

function sawSteps (seen: Seen, steps: unknown): void {
  if (Array.isArray(steps)) for (let i = 0; i < steps.length; i++) sawStep(seen, i, steps[i])
}

/** The usage read, with the steps' search queries when the usage reports no search count of its own. */
function usageWithSearches (seen: Seen): TokenUsage | undefined {
  const used = seen.usage
  if (used === undefined || (used.searchQueries ?? 0) > 0 || seen.searches.size === 0) return used
  let queries = 0
  for (const n of seen.searches.values()) queries += n
  return { ...used, searchQueries: queries }
}

/** What one SSE event says: the interaction's id, its running usage, the text it carries, an error. */
function readEvent (data: string, seen: Seen): void {
  if (data.length > MAX_READ_BYTES) return
  let event: unknown
  try {
    event = JSON.parse(data)
  } catch {
    return
  }
  if (!isObject(event)) return
  const interaction = isObject(event.interaction) ? event.interaction : undefined
  if (seen.id === undefined && typeof interaction?.id === 'string') seen.id = interaction.id
  if (seen.id === undefined && typeof event.interaction_id === 'string') seen.id = event.interaction_id
  const usage = readInteractionUsage(event.usage) ?? readInteractionUsage(interaction?.usage) ?? readInteractionUsage(isObject(event.metadata) ? event.metadata.total_usage : undefined)
  if (usage !== undefined) seen.usage = usage
  if (isObject(event.delta) && typeof event.delta.text === 'string') seen.chars += event.delta.text.length
  sawStep(seen, event.index, event.event_type === 'step.start' ? event.step : event.delta)
  sawSteps(seen, interaction?.steps)
  if (event.event_type === 'error') seen.failed = true
}

/**
 * The reader of an interaction's answer for the metered forward (lib/proxy/call/lifecycle.ts, meteredAnswer):
 * `created` is awaited with the interaction's id before the bytes naming it go out (a stream's first event; a JSON
 * answer's end, its last chunk held until then), and again with its usage once a stream has ended (the owner record
 * then keeps its history's length: docs/model-proxy.md, "Reservations"); the usage read settles the call.
 */
export function interactionReader (streamed: boolean, created: (id: string, usage?: TokenUsage) => Promise<void>): AnswerReader {
  const seen: Seen = { chars: 0, failed: false, searches: new Map() }
  let recorded = false
  let ended = false
  let withUsage = false
  const decoder = streamed ? createSseDecoder() : undefined
  // A JSON answer: its bytes (up to the bound), read at its end.
  const whole: Buffer[] = []
  let size = 0
  return {
    holdsLast: decoder === undefined,
    get usage () { return usageWithSearches(seen) },
    get chars () { return seen.chars },
    get failed () { return seen.failed },
    push (chunk) {
      if (decoder !== undefined) {
        for (const data of decoder.push(chunk)) readEvent(data, seen)
        return
      }
      size += chunk.length
      if (size <= MAX_READ_BYTES) whole.push(Buffer.from(chunk))
    },
    end () {
      ended = true
      if (decoder !== undefined) {
        for (const data of decoder.end()) readEvent(data, seen)
        return
      }
      if (size > MAX_READ_BYTES) return
      try {
        const interaction: unknown = JSON.parse(Buffer.concat(whole).toString('utf8'))
        if (isObject(interaction)) {
          if (typeof interaction.id === 'string') seen.id = interaction.id
          seen.usage = readInteractionUsage(interaction.usage)
          sawSteps(seen, interaction.steps)
        }
      } catch {}
    },
    async beforeSend () {
      if (seen.id === undefined || withUsage) return
      if (recorded && !(ended && seen.usage !== undefined)) return
      recorded = true
      withUsage = ended
      await created(seen.id, seen.usage)
    },
  }
}
