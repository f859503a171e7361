// Gemini stream events → Anthropic's streaming events (docs/messages.md, "Streaming"): message_start, then per
// block content_block_start / content_block_delta / content_block_stop, then message_delta with the stop reason
// and usage, then message_stop. Every event is named (`event: …`): the official SDK skips unnamed ones.
// message_start waits for the first upstream event, which carries the prompt's token count.
import type { GeminiResponse } from '../upstream/backend.ts'
import type { SseTranslator } from '../routes-stream.ts'
import { BlockAssembler } from './blocks.ts'
import type { BlockSink } from './blocks.ts'
import { anthropicUsage, stopReasonOf } from './response-from-gemini.ts'
import type { MessageMeta } from './response-from-gemini.ts'

/** Anthropic's keep-alive while nothing else is sent. */
export const PING = 'event: ping\ndata: {"type":"ping"}\n\n'

const frame = (type: string, data: string): string => `event: ${type}\ndata: ${data}\n\n`

export interface MessagesStreamOptions extends MessageMeta {
  /** The error event's body for a mid-stream failure. */
  errorBody: (err: unknown) => unknown
}

export function messagesStreamTranslator (options: MessagesStreamOptions): SseTranslator {
  let out = ''
  let started = false
  let usage: Record<string, unknown> | undefined
  let finishReason: unknown
  let blocked = false
  const sink: BlockSink = {
    start (index, block) { out += frame('content_block_start', `{"type":"content_block_start","index":${index},"content_block":${JSON.stringify(block)}}`) },
    delta (index, delta) { out += frame('content_block_delta', `{"type":"content_block_delta","index":${index},"delta":${JSON.stringify(delta)}}`) },
    stop (index) { out += frame('content_block_stop', `{"type":"content_block_stop","index":${index}}`) },
  }
  const assembler = new BlockAssembler(sink, options.omitThinking)

  function start (): void {
    if (started) return
    started = true
    const message = { id: options.id, type: 'message', role: 'assistant', model: options.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...anthropicUsage(usage), output_tokens: 0 } }
    out += frame('message_start', `{"type":"message_start","message":${JSON.stringify(message)}}`)
  }

  function take (): string {
    const text = out
    out = ''
    return text
  }

  return {
    head: '',
    keepAlive: PING,
    events (batch: GeminiResponse[]) {
      for (const event of batch) {
        if (event?.usageMetadata !== undefined && event.usageMetadata !== null) usage = event.usageMetadata
        start()
        const candidate = Array.isArray(event?.candidates) ? event.candidates[0] : undefined
        if (candidate === undefined) {
          if (event?.promptFeedback?.blockReason !== undefined) blocked = true
          continue
        }
        assembler.parts(candidate?.content?.parts)
        if (candidate.finishReason !== undefined) finishReason = candidate.finishReason
      }
      return take()
    },
    end () {
      start()
      assembler.end()
      const stop = stopReasonOf(finishReason, assembler.toolUses, blocked)
      out += frame('message_delta', `{"type":"message_delta","delta":{"stop_reason":${JSON.stringify(stop)},"stop_sequence":null},"usage":${JSON.stringify(anthropicUsage(usage))}}`)
      out += frame('message_stop', '{"type":"message_stop"}')
      return take()
    },
    error (err) {
      return take() + frame('error', JSON.stringify(options.errorBody(err)))
    },
  }
}
