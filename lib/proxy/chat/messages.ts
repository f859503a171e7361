// OpenAI messages → Gemini contents and systemInstruction (docs/chat-completions.md, "Messages" and "Tools").
//  - system and developer messages, in order, joined by blank lines → systemInstruction
//  - user → user turn; assistant → model turn (text first, then one functionCall per tool call)
//  - tool results (and the legacy `function` role) → functionResponse parts in one user turn,
//    in the order of the calls they answer
//  - adjacent turns with the same role are merged (Gemini wants parallel responses together)
//  - Gemini 3 thought signatures come back out of the tool-call ids; calls in the active loop
//    that have none get gemini-cli's placeholder so the upstream does not reject the turn
import type { ChatMessage } from './request-schema.ts'
import { jsonAllowance, parseJson } from '../../http/json-body.ts'
import type { JsonAllowance } from '../../http/json-body.ts'
import { invalidParam } from './error-body.ts'
import { contentText, contentToParts } from './content.ts'
import type { ContentContext, GeminiPart } from './content.ts'
import { thoughtSignatureOf } from '../tool-call-ids.ts'
import { addPlaceholderSignatures } from '../thought-signatures.ts'
import type { GeminiContent } from '../gemini/hub.ts'

export type { GeminiContent }

export interface ConvertedMessages {
  contents: GeminiContent[]
  systemInstruction?: { parts: Array<{ text: string }> }
}

export interface MessageOptions extends ContentContext {
  /** Add the placeholder signature to unsigned calls in the active loop (models that validate signatures). */
  placeholderSignatures: boolean
}

// Tool arguments and results are JSON inside strings: they are parsed within the same depth limit as a body, and
// all of one request's together within one body's count of values (else they stay as they are: text, or no args).
function parseArguments (args: string | undefined, allowance: JsonAllowance): Record<string, unknown> {
  if (args === undefined || args.trim() === '') return {}
  try {
    const value = parseJson(args, allowance)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : { value }
  } catch {
    return {}
  }
}

function toolResult (content: ChatMessage['content'], allowance: JsonAllowance): unknown {
  const text = contentText(content)
  try {
    return parseJson(text, allowance)
  } catch {
    return text
  }
}

interface CallInfo { name: string, order: number }

export async function convertMessages (messages: readonly ChatMessage[], options: MessageOptions): Promise<ConvertedMessages> {
  const system: string[] = []
  const turns: Array<{ role: 'user' | 'model', parts: GeminiPart[], tool?: Array<{ part: GeminiPart, order: number }> }> = []
  const calls = new Map<string, CallInfo>()
  let callCounter = 0
  const json = jsonAllowance()

  // Image fetches of all messages run concurrently; order is restored below.
  const partsOf = await Promise.all(messages.map((m, i) =>
    m.role === 'user' || m.role === 'assistant' ? contentToParts(m.content, options, `messages[${i}].content`) : Promise.resolve([])))

  const push = (role: 'user' | 'model', parts: GeminiPart[]): void => {
    if (parts.length === 0) return
    const last = turns[turns.length - 1]
    if (last !== undefined && last.role === role && last.tool === undefined) last.parts.push(...parts)
    else turns.push({ role, parts })
  }

  messages.forEach((m, i) => {
    switch (m.role) {
      case 'system':
      case 'developer': {
        const text = contentText(m.content)
        if (text !== '') system.push(text)
        return
      }
      case 'user':
        push('user', partsOf[i])
        return
      case 'assistant': {
        // Empty text beside tool calls is how clients say "no text"; it is not a part.
        const parts = partsOf[i].filter(p => !(p.text === '' && Object.keys(p).length === 1))
        for (const call of m.tool_calls ?? []) {
          const part: GeminiPart = { functionCall: { name: call.function.name, args: parseArguments(call.function.arguments, json) } }
          const signature = thoughtSignatureOf(call.id)
          if (signature !== undefined) part.thoughtSignature = signature
          parts.push(part)
          calls.set(call.id, { name: call.function.name, order: callCounter++ })
        }
        push('model', parts)
        return
      }
      case 'tool':
      case 'function': {
        const call = m.role === 'tool' ? calls.get(m.tool_call_id as string) : undefined
        const name = call?.name ?? m.name
        if (name === undefined || name === null) {
          throw invalidParam(`No assistant tool call has the id "${m.tool_call_id}"`, `messages[${i}].tool_call_id`)
        }
        const part = { functionResponse: { name, response: { result: toolResult(m.content, json) } } }
        const last = turns[turns.length - 1]
        const entry = { part, order: call?.order ?? Number.MAX_SAFE_INTEGER }
        if (last?.tool !== undefined) last.tool.push(entry)
        else turns.push({ role: 'user', parts: [], tool: [entry] })
      }
    }
  })

  const contents: GeminiContent[] = []
  for (const turn of turns) {
    const parts = turn.tool !== undefined
      ? turn.tool.map((e, k) => ({ ...e, k })).sort((a, b) => a.order - b.order || a.k - b.k).map(e => e.part)
      : turn.parts
    const last = contents[contents.length - 1]
    if (last !== undefined && last.role === turn.role) last.parts.push(...parts)
    else contents.push({ role: turn.role, parts })
  }
  if (contents.length === 0) throw invalidParam('messages must hold at least one user or assistant message with content', 'messages')
  if (options.placeholderSignatures) addPlaceholderSignatures(contents)

  const converted: ConvertedMessages = { contents }
  if (system.length > 0) converted.systemInstruction = { parts: [{ text: system.join('\n\n') }] }
  return converted
}
