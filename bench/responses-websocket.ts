// A Codex-like multi-turn session over the Responses WebSocket transport against the same session as one streamed
// POST /v1/responses per turn (SSE, the whole history each time), on one proxy in this process over the fake upstream:
// milliseconds per turn, request bytes sent, and this process's CPU per turn, in alternating rounds.
// Usage: node bench/responses-websocket.ts [turns] [rounds] [history items per turn]
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createNodeListener, createProxy } from '../lib/index.ts'
import { geminiResponse, startFakeUpstream, streamReply } from '../test/support/fake-upstream.ts'

const TURNS = Number(process.argv[2] ?? 20)
const ROUNDS = Number(process.argv[3] ?? 5)
const ITEM_TEXT = 'x'.repeat(2000)
const PASSWORD = 'bench-ws-password'

const fake = await startFakeUpstream({ record: false })
fake.setDefault('streamGenerateContent', streamReply([geminiResponse({ text: 'Working on it.' }), geminiResponse({ text: ' Done.', finishReason: 'STOP', usage: true })]))
const proxy = createProxy({ password: PASSWORD, upstream: { backend: 'gemini-api', apiKey: 'bench', geminiApiEndpoint: fake.url, maxRetries: 0 } })
const listener = createNodeListener(proxy.routeTable)
const server = http.createServer(listener)
server.on('upgrade', listener.upgrade)
await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

const body = (input: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ model: 'gemini-2.5-flash', instructions: 'Be brief.', input, tools: [], store: false, stream: true, ...extra })
const userItem = (turn: number): Record<string, unknown> => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `turn ${turn} ${ITEM_TEXT}` }] })

/** One session over SSE: each turn POSTs the whole history and reads the stream to its end. */
async function sseSession (): Promise<number> {
  let history: unknown[] = []
  let bytes = 0
  for (let turn = 0; turn < TURNS; turn++) {
    history = [...history, userItem(turn)]
    const payload = JSON.stringify(body(history))
    bytes += payload.length
    const res = await fetch(`${url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }, body: payload })
    const text = await res.text()
    const done = text.split('\n\n').find(e => e.startsWith('event: response.completed'))
    if (done === undefined) throw new Error(`turn ${turn}: no response.completed`)
    history = [...history, ...(JSON.parse(done.slice(done.indexOf('data: ') + 6)) as { response: { output: unknown[] } }).response.output]
  }
  return bytes
}

/** One session over one socket: each turn sends only its new item, continuing the last response. */
async function wsSession (): Promise<number> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${PASSWORD}` } } as unknown as string[])
  await new Promise<void>((resolve, reject) => { ws.onopen = () => resolve(); ws.onerror = () => reject(new Error('no upgrade')) })
  let bytes = 0
  let last: string | undefined
  for (let turn = 0; turn < TURNS; turn++) {
    const payload = JSON.stringify({ type: 'response.create', ...body([userItem(turn)], last === undefined ? {} : { previous_response_id: last }) })
    bytes += payload.length
    last = await new Promise<string>((resolve, reject) => {
      ws.onmessage = e => {
        const event = JSON.parse(e.data as string) as { type: string, response?: { id: string } }
        if (event.type === 'response.completed') resolve(event.response!.id)
        else if (event.type === 'error' || event.type === 'response.failed') reject(new Error(e.data as string))
      }
      ws.send(payload)
    })
  }
  ws.close()
  return bytes
}

async function measure (session: () => Promise<number>): Promise<{ ms: number, cpuMs: number, bytes: number }> {
  const cpu = process.cpuUsage()
  const start = performance.now()
  const bytes = await session()
  const ms = performance.now() - start
  const used = process.cpuUsage(cpu)
  return { ms: ms / TURNS, cpuMs: (used.user + used.system) / 1000 / TURNS, bytes }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const results = { sse: [] as Array<Awaited<ReturnType<typeof measure>>>, ws: [] as Array<Awaited<ReturnType<typeof measure>>> }
await measure(sseSession)
await measure(wsSession)
for (let round = 0; round < ROUNDS; round++) {
  results.sse.push(await measure(sseSession))
  results.ws.push(await measure(wsSession))
}
const row = (name: string, list: typeof results.sse): string =>
  `| ${name} | ${median(list.map(r => r.ms)).toFixed(2)} | ${median(list.map(r => r.cpuMs)).toFixed(2)} | ${Math.round(list[0].bytes / 1024)} |`
console.log(`${TURNS} turns a session, ${ROUNDS} rounds, medians; client, proxy and fake upstream in one process`)
console.log('| transport | ms per turn | CPU ms per turn | request KiB a session |')
console.log('| --- | --- | --- | --- |')
console.log(row('SSE, a POST per turn', results.sse))
console.log(row('WebSocket, one socket', results.ws))
server.close()
await proxy.close()
await fake.close()
