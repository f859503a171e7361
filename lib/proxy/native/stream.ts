// Gemini stream events → native SSE, as the Gemini API sends them: `data: <json>\n\n` per event and
// no [DONE]. A failure after the stream started becomes one `data: {"error":{...}}` event, which
// @google/genai turns into an ApiError. Events that arrived together become one string.
import { eventBatches } from '../upstream/backend.ts'
import type { GeminiResponse } from '../upstream/backend.ts'
import type { SseTranslator } from '../routes-stream.ts'

/** The native stream's translation: each event serialised once, as it is (see routes-stream.ts, sseBody). */
export function nativeStreamTranslator (errorBody: (err: unknown) => unknown): SseTranslator {
  return {
    head: '',
    events (batch) {
      let chunks = ''
      for (const event of batch) chunks += `data: ${JSON.stringify(event)}\n\n`
      return chunks
    },
    end: () => '',
    error: err => `data: ${JSON.stringify(errorBody(err))}\n\n`,
  }
}

/** The events of `events` as native SSE text, one string per batch (the translator, without a route's body). */
export async function * nativeEventStream (events: AsyncIterable<GeminiResponse>, errorBody: (err: unknown) => unknown): AsyncGenerator<string> {
  const translator = nativeStreamTranslator(errorBody)
  try {
    for await (const batch of eventBatches(events)) yield translator.events(batch)
  } catch (err) {
    yield translator.error(err)
  }
}
