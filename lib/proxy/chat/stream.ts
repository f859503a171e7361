// Gemini stream events → chat-completions chunks as SSE lines (docs/chat-completions.md, "Streaming").
// The first chunk carries the role; `created` is fixed per stream; events without candidates
// send nothing (their usage is remembered); a failure after the stream started is an error event
// followed by [DONE], never a made-up `stop`. The chunks of events that arrived together are
// translated into one string, so they go out in one write.
import { eventBatches } from '../upstream/backend.ts'
import type { GeminiResponse } from '../upstream/backend.ts'
import { candidatesOf, finishReasonOf, partsOf } from '../gemini/hub.ts'
import { mapFinishReason, partsToOutput, toUsage } from './response-from-gemini.ts'
import type { CompletionMeta, FinishReason, OpenAIUsage } from './response-from-gemini.ts'
import type { SseTranslator } from '../routes-stream.ts'

export interface ChatStreamOptions extends CompletionMeta {
  /** stream_options.include_usage: every chunk has `usage: null` and one extra chunk carries the totals. */
  includeUsage: boolean
  /** The error event's `error` object for a mid-stream failure. */
  errorBody: (err: unknown) => unknown
}

interface Delta {
  role?: 'assistant'
  content?: string
  reasoning_content?: string
  tool_calls?: Array<{ index: number, id: string, type: 'function', function: { name: string, arguments: string } }>
}

interface ChoiceState { toolCalls: number, finished: boolean }

export const DONE = 'data: [DONE]\n\n'

/** The translation of a stream's Gemini events into chat-completion chunks (see routes-stream.ts, sseBody). */
export function chatStreamTranslator (options: ChatStreamOptions): SseTranslator {
  const { id, created, model, includeUsage } = options
  // The fields every chunk repeats, serialised once per stream.
  const head = `data: {"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${JSON.stringify(created)},"model":${JSON.stringify(model)},"choices":`
  const tail = includeUsage ? ',"usage":null}\n\n' : '}\n\n'
  const frame = (choices: unknown[], usage?: OpenAIUsage | null): string =>
    usage === undefined ? `${head}${JSON.stringify(choices)}${tail}` : `${head}${JSON.stringify(choices)},"usage":${JSON.stringify(usage)}}\n\n`
  const states = new Map<number, ChoiceState>([[0, { toolCalls: 0, finished: false }]])
  let usage: OpenAIUsage | undefined

  /** The chunk for one event, or '' when it has nothing for the client. */
  function translate (event: GeminiResponse): string {
    const eventUsage = toUsage(event?.usageMetadata)
    if (eventUsage !== undefined) usage = eventUsage
    const candidates = candidatesOf(event)
    const choices: unknown[] = []
    for (let i = 0; i < candidates.length; i++) {
      const candidate = candidates[i]
      const index = typeof candidate?.index === 'number' ? candidate.index : i
      let state = states.get(index)
      const delta: Delta = {}
      let empty = true
      if (state === undefined) {
        state = { toolCalls: 0, finished: false }
        states.set(index, state)
        delta.role = 'assistant'
        empty = false
      }
      const out = partsToOutput(partsOf(candidate))
      if (out.content !== '') {
        delta.content = out.content
        empty = false
      }
      if (out.reasoning !== '') {
        delta.reasoning_content = out.reasoning
        empty = false
      }
      if (out.toolCalls.length > 0) {
        // Gemini sends each call whole: one delta holds its complete arguments.
        const calls = state
        delta.tool_calls = out.toolCalls.map(call => ({ index: calls.toolCalls++, ...call }))
        empty = false
      }
      const reason = finishReasonOf(candidate)
      const finish = reason === undefined ? null : mapFinishReason(reason, state.toolCalls > 0, false)
      if (finish !== null) state.finished = true
      if (!empty || finish !== null) choices.push({ index, delta, logprobs: null, finish_reason: finish })
    }
    return choices.length > 0 ? frame(choices) : ''
  }

  return {
    head: frame([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]),
    events (batch) {
      let chunks = ''
      for (const event of batch) chunks += translate(event)
      return chunks
    },
    end () {
      let out = ''
      const unfinished = [...states].filter(([, s]) => !s.finished)
      if (unfinished.length > 0) {
        out += frame(unfinished.map(([index, s]) => ({
          index, delta: {}, logprobs: null, finish_reason: mapFinishReason(undefined, s.toolCalls > 0, true) as FinishReason,
        })))
      }
      if (includeUsage) out += frame([], usage ?? toUsage({}))
      return out + DONE
    },
    error: err => `data: ${JSON.stringify(options.errorBody(err))}\n\n${DONE}`,
  }
}

/** The chunks of `events` as SSE text, one string per batch of events that arrived together (the translator, without a route's body). */
export async function * chatCompletionStream (events: AsyncIterable<GeminiResponse>, options: ChatStreamOptions): AsyncGenerator<string> {
  const translator = chatStreamTranslator(options)
  yield translator.head
  try {
    for await (const batch of eventBatches(events)) {
      const chunks = translator.events(batch)
      if (chunks !== '') yield chunks
    }
  } catch (err) {
    yield * frames(translator.error(err))
    return
  }
  yield * frames(translator.end())
}

/** SSE text split into its events. */
function frames (text: string): string[] {
  return text.split(/(?<=\n\n)/).filter(f => f !== '')
}
