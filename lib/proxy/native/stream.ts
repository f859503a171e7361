// Gemini stream events → native SSE, as the Gemini API sends them: `data: <json>\n\n` per event and
// no [DONE]. A failure after the stream started becomes one `data: {"error":{...}}` event, which
// @google/genai turns into an ApiError. Events that arrived together are yielded as one string.
import { eventBatches } from '../upstream/backend.ts'
import type { GeminiResponse } from '../upstream/backend.ts'

export async function * nativeEventStream (events: AsyncIterable<GeminiResponse>, errorBody: (err: unknown) => unknown): AsyncGenerator<string> {
  try {
    for await (const batch of eventBatches(events)) {
      let chunks = ''
      for (const event of batch) chunks += `data: ${JSON.stringify(event)}\n\n`
      yield chunks
    }
  } catch (err) {
    yield `data: ${JSON.stringify(errorBody(err))}\n\n`
  }
}
