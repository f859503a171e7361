// The floor of a Hapi gateway that serves the chat-completions surface, for the streaming rows: bench/bare-hapi-relay.ts
// plus the least translation any such gateway does, and nothing else (no validation, client authentication, limits,
// logging or metrics). Its one route takes a chat-completions request (Hapi parses the JSON), sends its text to the
// fake upstream (argv[2]) as a Code Assist streamGenerateContent call with undici, and answers each upstream event
// as a chat.completion.chunk: each event's JSON parsed, its text and finish reason put into a chunk (the fields every
// chunk repeats serialised once per stream, as the gateway does), one write per upstream read, `data: [DONE]` at the
// end. What it costs over the bare Hapi relay is what translating a stream costs by itself; what the gateway costs
// over it is the rest of its work (client authentication, validation, limits, usage, logs, metrics, keep-alives).
import Hapi from '@hapi/hapi'
import { Agent, request } from 'undici'

const upstream = new URL('/v1internal:streamGenerateContent?alt=sse', process.argv[2])
const agent = new Agent()
const server = Hapi.server({ host: '127.0.0.1', port: 0 })

interface ChatRequest { model: string, messages: Array<{ role: string, content: string }> }
interface Event { response?: { candidates?: Array<{ content?: { parts?: Array<{ text?: string }> }, finishReason?: string }> } }

server.route({
  method: 'POST',
  path: '/v1/chat/completions',
  handler: async (req, h) => {
    const chat = req.payload as ChatRequest
    const contents = chat.messages.map(m => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] }))
    const answer = await request(upstream, {
      dispatcher: agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer fake-access-1' },
      body: JSON.stringify({ model: chat.model, project: 'bench-project', user_prompt_id: 'bench', request: { contents } }),
    })
    // What every chunk repeats, serialised once per stream; per event only its text is.
    const head = `data: {"id":"chatcmpl-${crypto.randomUUID()}","object":"chat.completion.chunk","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(chat.model)},"choices":[{"index":0,"delta":{`
    const chunk = (delta: string, finish: string): string => `${head}${delta}},"finish_reason":${finish}}]}\n\n`
    // Written to Node's response directly, as the gateway's Hapi adapter writes a stream (lib/http/hapi-adapter.ts):
    // handing Hapi a PassThrough instead costs a write per chunk more.
    const res = req.raw.res
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    void (async () => {
      let text = chunk('"role":"assistant","content":""', 'null')
      let partial = ''
      answer.body.setEncoding('utf8')
      for await (const read of answer.body as AsyncIterable<string>) {
        const events = (partial + read).split('\n\n')
        partial = events.pop() as string
        for (const event of events) {
          if (!event.startsWith('data: ')) continue
          const candidate = (JSON.parse(event.slice(6)) as Event).response?.candidates?.[0]
          const content = candidate?.content?.parts?.map(p => p.text ?? '').join('') ?? ''
          text += chunk(`"content":${JSON.stringify(content)}`, candidate?.finishReason === 'STOP' ? '"stop"' : 'null')
        }
        res.write(text)
        text = ''
      }
      res.end('data: [DONE]\n\n')
    })().catch(err => res.destroy(err as Error))
    return h.abandon
  },
})
await server.start()
console.log(`listening on ${server.info.uri}`)
process.once('SIGTERM', () => { void server.stop().then(() => process.exit(0)) })
