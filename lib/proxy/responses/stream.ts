// Responses stream events as SSE (docs/responses.md, "Streaming"): each event is `event: <type>` and its JSON, the
// events of one upstream read in one string (routes-stream.ts sends each string in one write). A failure after the
// stream began is response.failed with OpenAI's error code, never a made-up completion.
import type { SseTranslator } from '../routes-stream.ts'
import type { ResponseBuilder, ResponseEvent } from './response-from-gemini.ts'

export function sseEvents (events: readonly ResponseEvent[]): string {
  let text = ''
  for (const event of events) text += `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
  return text
}

/** The translation of a stream's Gemini events by `builder` (see routes-stream.ts, sseBody). */
export function responsesStreamTranslator (builder: ResponseBuilder): SseTranslator {
  return {
    head: sseEvents(builder.start()),
    events (batch) {
      let text = ''
      for (const event of batch) text += sseEvents(builder.add(event))
      return text
    },
    end: () => sseEvents(builder.finish()),
    error: err => sseEvents(builder.fail(err)),
  }
}
