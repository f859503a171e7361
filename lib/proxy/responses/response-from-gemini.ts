// Gemini GenerateContentResponses → a Responses `response` object and its stream events (docs/responses.md,
// "Response" and "Streaming"). One builder serves both: a streamed answer is fed event by event and its events go
// to the client; a whole answer is fed once and only the finished object is kept. The events come in the order the
// official SDK's accumulator (ResponseStream) requires: every item added before its deltas, done with the same id,
// and response.completed holding every item that was done.
//
// Output items, in the order Gemini's parts come:
//  - thought text → a `reasoning` item with one summary_text part
//  - answer text → a `message` item with one output_text part
//  - function calls → `function_call` items (or `custom_tool_call` for freeform tools, `input` the raw string), each
//    call with its `namespace` and `name` apart; calls that carry thought signatures are preceded by a reasoning item
//    (the one streaming thoughts, else one of their own) whose encrypted_content seals the signatures by call id.
import { randomBytes } from 'node:crypto'
import type { GeminiResponse } from '../upstream/backend.ts'
import type { ResponsesRequest } from './request-schema.ts'
import type { ToolName } from './request-to-gemini.ts'
import type { SignatureSealer } from './encrypted-content.ts'
import { isContentFilter, tokensOf } from '../gemini/hub.ts'

type Part = Record<string, any>
export type ResponseItem = Record<string, unknown> & { id: string, type: string }
export type ResponseEvent = Record<string, unknown> & { type: string }

export interface ResponseUsage {
  input_tokens: number
  input_tokens_details: { cached_tokens: number }
  output_tokens: number
  output_tokens_details: { reasoning_tokens: number }
  total_tokens: number
}

export interface ResponseObject extends Record<string, unknown> {
  id: string
  object: 'response'
  created_at: number
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed'
  output: ResponseItem[]
  usage: ResponseUsage | null
}

export interface ResponseMeta {
  id: string
  /** Unix seconds. */
  createdAt: number
  /** The model as requested. */
  model: string
  request: ResponsesRequest
  /** Gemini function name → the client's tool (request-to-gemini.ts). */
  tools: ReadonlyMap<string, ToolName>
  sealer: SignatureSealer
  /** The owner sealed signatures are bound to. */
  owner: string
  /** The error object of a failed response (error-body.ts): `{ code, message }`. */
  errorObject: (err: unknown) => { code: string, message: string }
  /** A compaction turn: the answer's text becomes one compaction item, its summary sealed; nothing else is output. */
  compaction?: boolean
}

const hex = (bytes: number): string => randomBytes(bytes).toString('hex')
export const newItemId = (prefix: string): string => `${prefix}_${hex(16)}`

/** usageMetadata → Responses usage; undefined when the upstream sent none. */
export function toUsage (usage: unknown): ResponseUsage | undefined {
  const t = tokensOf(usage)
  if (t === undefined) return undefined
  const output = t.output + t.thoughts
  return {
    input_tokens: t.input,
    input_tokens_details: { cached_tokens: t.cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: t.thoughts },
    total_tokens: t.total ?? t.input + output,
  }
}

/** The request fields a response repeats, as OpenAI's do. */
function echoed (meta: ResponseMeta): Record<string, unknown> {
  const body = meta.request
  return {
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    model: meta.model,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    store: body.store ?? true,
    temperature: body.temperature ?? null,
    text: { format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? null,
    truncation: 'disabled',
    user: body.user ?? null,
  }
}

export interface ResponseBuilder {
  /** The response as it stands (its output the items done so far). */
  readonly response: ResponseObject
  /** response.created and response.in_progress. */
  start (): ResponseEvent[]
  /** The events for one upstream event. */
  add (event: GeminiResponse): ResponseEvent[]
  /** Closes what is open; the last event is response.completed (or .incomplete). Idempotent: a second call adds nothing. */
  finish (): ResponseEvent[]
  /** As finish, keeping its events for the next call that returns events: the finished response, to store before the last event goes out. */
  complete (): ResponseObject
  /** response.failed, after closing nothing: what was done stays in the output. */
  fail (err: unknown): ResponseEvent[]
}

interface OpenItem { index: number, item: ResponseItem, text: string, calls: Record<string, string> }

export function createResponseBuilder (meta: ResponseMeta): ResponseBuilder {
  const response: ResponseObject = { id: meta.id, object: 'response', created_at: meta.createdAt, status: 'in_progress', ...echoed(meta), output: [], usage: null }
  let sequence = 0
  let nextIndex = 0
  let open: OpenItem | undefined
  let finishReason: unknown
  let blocked = false
  let finished = false
  let usage: ResponseUsage | undefined
  let summary = ''
  const out: ResponseEvent[] = []
  const emit = (event: ResponseEvent): void => { out.push({ ...event, sequence_number: sequence++ }) }
  const drain = (): ResponseEvent[] => out.splice(0, out.length)
  const snapshot = (): ResponseObject => structuredClone(response)

  function openItem (item: ResponseItem): OpenItem {
    const entry = { index: nextIndex++, item, text: '', calls: {} }
    emit({ type: 'response.output_item.added', output_index: entry.index, item: structuredClone(item) })
    return entry
  }

  function done (entry: OpenItem): void {
    response.output.push(entry.item)
    emit({ type: 'response.output_item.done', output_index: entry.index, item: structuredClone(entry.item) })
  }

  function close (): void {
    const entry = open
    if (entry === undefined) return
    open = undefined
    const { item, index } = entry
    if (item.type === 'reasoning') {
      if (entry.text !== '') {
        const part = { type: 'summary_text', text: entry.text }
        emit({ type: 'response.reasoning_summary_text.done', item_id: item.id, output_index: index, summary_index: 0, text: entry.text })
        emit({ type: 'response.reasoning_summary_part.done', item_id: item.id, output_index: index, summary_index: 0, part })
        item.summary = [part]
      }
      if (Object.keys(entry.calls).length > 0) item.encrypted_content = meta.sealer.seal(meta.owner, { calls: entry.calls })
    } else if (item.type === 'message') {
      const part = { type: 'output_text', text: entry.text, annotations: [], logprobs: [] }
      emit({ type: 'response.output_text.done', item_id: item.id, output_index: index, content_index: 0, text: entry.text, logprobs: [] })
      emit({ type: 'response.content_part.done', item_id: item.id, output_index: index, content_index: 0, part })
      item.content = [part]
      item.status = 'completed'
    }
    done(entry)
  }

  function thought (text: string): void {
    if (open?.item.type !== 'reasoning') {
      close()
      open = openItem({ id: newItemId('rs'), type: 'reasoning', summary: [] })
    }
    const entry = open
    if (entry.text === '') emit({ type: 'response.reasoning_summary_part.added', item_id: entry.item.id, output_index: entry.index, summary_index: 0, part: { type: 'summary_text', text: '' } })
    entry.text += text
    emit({ type: 'response.reasoning_summary_text.delta', item_id: entry.item.id, output_index: entry.index, summary_index: 0, delta: text })
  }

  function answer (text: string): void {
    if (open?.item.type !== 'message') {
      close()
      open = openItem({ id: newItemId('msg'), type: 'message', role: 'assistant', status: 'in_progress', content: [] })
      emit({ type: 'response.content_part.added', item_id: open.item.id, output_index: open.index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } })
    }
    open.text += text
    emit({ type: 'response.output_text.delta', item_id: open.item.id, output_index: open.index, content_index: 0, delta: text, logprobs: [] })
  }

  /** One event's run of function calls: their signatures go to the reasoning item before them. */
  function toolCalls (parts: Part[]): void {
    const calls = parts.map(part => ({ part, callId: `call_${hex(12)}` }))
    const signed = calls.filter(c => typeof c.part.thoughtSignature === 'string' && c.part.thoughtSignature !== '')
    if (signed.length > 0) {
      if (open?.item.type !== 'reasoning') {
        close()
        open = openItem({ id: newItemId('rs'), type: 'reasoning', summary: [] })
      }
      for (const c of signed) open.calls[c.callId] = c.part.thoughtSignature
    }
    close()
    for (const { part, callId } of calls) {
      const geminiName = String(part.functionCall.name ?? '')
      const tool = meta.tools.get(geminiName) ?? { kind: 'function', name: geminiName }
      const args = part.functionCall.args !== null && typeof part.functionCall.args === 'object' ? part.functionCall.args : {}
      const namespace = tool.namespace === undefined ? {} : { namespace: tool.namespace }
      if (tool.kind === 'custom') {
        const input = typeof args.input === 'string' ? args.input : JSON.stringify(args)
        const entry = openItem({ id: newItemId('ctc'), type: 'custom_tool_call', status: 'in_progress', call_id: callId, name: tool.name, ...namespace, input: '' })
        emit({ type: 'response.custom_tool_call_input.delta', item_id: entry.item.id, output_index: entry.index, delta: input })
        emit({ type: 'response.custom_tool_call_input.done', item_id: entry.item.id, output_index: entry.index, input })
        entry.item.input = input
        entry.item.status = 'completed'
        done(entry)
      } else {
        const text = JSON.stringify(args)
        const entry = openItem({ id: newItemId('fc'), type: 'function_call', status: 'in_progress', call_id: callId, name: tool.name, ...namespace, arguments: '' })
        emit({ type: 'response.function_call_arguments.delta', item_id: entry.item.id, output_index: entry.index, delta: text })
        emit({ type: 'response.function_call_arguments.done', item_id: entry.item.id, output_index: entry.index, name: tool.name, arguments: text })
        entry.item.arguments = text
        entry.item.status = 'completed'
        done(entry)
      }
    }
  }

  function settle (): void {
    close()
    if (meta.compaction === true) done(openItem({ id: newItemId('cmp'), type: 'compaction', encrypted_content: meta.sealer.seal(meta.owner, { calls: {}, summary }) }))
    if (usage !== undefined) response.usage = usage
    const filtered = blocked || isContentFilter(finishReason)
    if (finishReason === 'MAX_TOKENS') {
      response.status = 'incomplete'
      response.incomplete_details = { reason: 'max_output_tokens' }
    } else if (filtered) {
      response.status = 'incomplete'
      response.incomplete_details = { reason: 'content_filter' }
    } else {
      response.status = 'completed'
    }
  }

  return {
    response,
    start () {
      emit({ type: 'response.created', response: snapshot() })
      emit({ type: 'response.in_progress', response: snapshot() })
      return drain()
    },
    add (event) {
      if (finished) return []
      const eventUsage = toUsage(event?.usageMetadata)
      if (eventUsage !== undefined) usage = eventUsage
      if (event?.promptFeedback?.blockReason !== undefined) blocked = true
      const candidates: Part[] = Array.isArray(event?.candidates) ? event.candidates : []
      const candidate = candidates.find(c => (c?.index ?? 0) === 0) ?? candidates[0]
      const parts: Part[] = Array.isArray(candidate?.content?.parts) ? candidate.content.parts : []
      let run: Part[] = []
      const flush = (): void => {
        if (run.length > 0) toolCalls(run)
        run = []
      }
      for (const part of parts) {
        if (part === null || typeof part !== 'object') continue
        if (part.functionCall !== undefined && part.functionCall !== null && meta.compaction !== true) {
          run.push(part)
          continue
        }
        flush()
        if (meta.compaction === true) {
          if (typeof part.text === 'string' && part.thought !== true) summary += part.text
          continue
        }
        if (typeof part.text === 'string' && part.text !== '') {
          if (part.thought === true) thought(part.text)
          else answer(part.text)
        } else if (part.inlineData?.mimeType?.startsWith?.('image/') === true && typeof part.inlineData.data === 'string') {
          answer(`![image](data:${String(part.inlineData.mimeType)};base64,${String(part.inlineData.data)})`)
        }
      }
      flush()
      if (candidate?.finishReason !== undefined) finishReason = candidate.finishReason
      return drain()
    },
    complete () {
      if (!finished) {
        finished = true
        settle()
        emit({ type: response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response: snapshot() })
      }
      return response
    },
    finish () {
      this.complete()
      return drain()
    },
    fail (err) {
      if (finished) return drain()
      finished = true
      response.status = 'failed'
      response.error = meta.errorObject(err)
      if (usage !== undefined) response.usage = usage
      emit({ type: 'response.failed', response: snapshot() })
      return drain()
    },
  }
}
