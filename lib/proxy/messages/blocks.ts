// Gemini parts → Anthropic content blocks, one state machine for the whole answer and the stream
// (docs/messages.md, "Response"). Consecutive thought texts make one thinking block, consecutive texts one
// text block, each functionCall one tool_use block. A thinking block stays open until the next other part,
// because Gemini puts the signature of a turn on that part (its first functionCall, or its text): the block
// closes with that signature, and a tool_use id carries its own call's signature as well.
import { newToolCallId } from '../tool-call-ids.ts'

export type ContentBlock =
  | { type: 'text', text: string }
  | { type: 'thinking', thinking: string, signature: string }
  | { type: 'tool_use', id: string, name: string, input: Record<string, unknown> }

export type BlockDelta =
  | { type: 'text_delta', text: string }
  | { type: 'thinking_delta', thinking: string }
  | { type: 'signature_delta', signature: string }
  | { type: 'input_json_delta', partial_json: string }

export interface BlockSink {
  start (index: number, block: ContentBlock): void
  delta (index: number, delta: BlockDelta): void
  stop (index: number): void
}

type Part = Record<string, any>

export class BlockAssembler {
  private open: 'text' | 'thinking' | undefined
  private index = -1
  private readonly sink: BlockSink
  /** How many tool_use blocks the answer has. */
  toolUses = 0

  /** Thinking blocks keep their signatures but carry no text (the request's `thinking.display: "omitted"`). */
  private readonly omitThinking: boolean

  constructor (sink: BlockSink, omitThinking = false) {
    this.sink = sink
    this.omitThinking = omitThinking
  }

  private close (signature?: string): void {
    if (this.open === undefined) return
    if (this.open === 'thinking' && signature !== undefined) this.sink.delta(this.index, { type: 'signature_delta', signature })
    this.sink.stop(this.index)
    this.open = undefined
  }

  private begin (block: ContentBlock): void {
    this.index++
    this.sink.start(this.index, block)
  }

  parts (parts: readonly Part[] | undefined): void {
    for (const part of parts ?? []) {
      if (part === null || typeof part !== 'object') continue
      const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '' ? part.thoughtSignature as string : undefined
      if (part.functionCall !== undefined && part.functionCall !== null) {
        this.close(signature)
        const call = part.functionCall
        const input = call.args !== null && typeof call.args === 'object' ? call.args as Record<string, unknown> : {}
        this.begin({ type: 'tool_use', id: newToolCallId(signature), name: String(call.name ?? ''), input: {} })
        this.sink.delta(this.index, { type: 'input_json_delta', partial_json: JSON.stringify(input) })
        this.sink.stop(this.index)
        this.toolUses++
      } else if (typeof part.text === 'string') {
        if (part.thought === true) {
          if (this.open !== 'thinking') {
            this.close()
            this.begin({ type: 'thinking', thinking: '', signature: '' })
            this.open = 'thinking'
          }
          if (part.text !== '' && !this.omitThinking) this.sink.delta(this.index, { type: 'thinking_delta', thinking: part.text })
          if (signature !== undefined) {
            this.sink.delta(this.index, { type: 'signature_delta', signature })
          }
        } else {
          if (this.open !== 'text') {
            this.close(signature)
            if (part.text === '') continue
            this.begin({ type: 'text', text: '' })
            this.open = 'text'
          }
          if (part.text !== '') this.sink.delta(this.index, { type: 'text_delta', text: part.text })
        }
      }
      // inlineData (generated images) has no Anthropic block: left out (docs/messages.md, "Response").
    }
  }

  /** Closes the last block; nothing after this. */
  end (): void {
    this.close()
  }
}

/** A sink that builds the blocks of a whole answer. */
export function collectBlocks (): { sink: BlockSink, blocks: ContentBlock[] } {
  const blocks: ContentBlock[] = []
  const json: string[] = []
  return {
    blocks,
    sink: {
      start (index, block) { blocks[index] = { ...block } },
      delta (index, delta) {
        const block = blocks[index]
        if (delta.type === 'text_delta' && block.type === 'text') block.text += delta.text
        else if (delta.type === 'thinking_delta' && block.type === 'thinking') block.thinking += delta.thinking
        else if (delta.type === 'signature_delta' && block.type === 'thinking') block.signature = delta.signature
        else if (delta.type === 'input_json_delta') json[index] = (json[index] ?? '') + delta.partial_json
      },
      stop (index) {
        const block = blocks[index]
        if (block.type === 'tool_use' && json[index] !== undefined) block.input = JSON.parse(json[index]) as Record<string, unknown>
      },
    },
  }
}
