// A Codex-like multi-turn session over the Responses WebSocket transport against the same session as one streamed
// POST /v1/responses per turn (SSE, the whole history each time), on one proxy in this process over the fake upstream:
// milliseconds per turn, request bytes sent, and this process's CPU per turn, in alternating rounds.
// Usage: node bench/responses-websocket.ts [turns] [rounds]; npm run bench runs it as a row (responsesWebsocket).
import http from 'node:http'
import { fileURLToPath } from 'node:url'
import type { AddressInfo } from 'node:net'
import { createNodeListener, createProxy } from '../lib/index.ts'
import { geminiResponse, startFakeUpstream, streamReply } from '../test/support/fake-upstream.ts'

const ITEM_TEXT = 'x'.repeat(2000)
const PASSWORD = 'bench-ws-password'

export interface TransportFigures { ms: number, cpuMs: number, bytes: number }
/** Medians over the rounds of each transport: ms and CPU ms per turn, request bytes of the first round's session. */
export interface WebsocketBench { turns: number, rounds: number, sse: TransportFigures, ws: TransportFigures }

/** Runs `rounds` alternating rounds of one `turns`-turn session over each transport (after one of each to warm up). */
export async function responsesWebsocket (turns = 20, rounds = 5): Promise<WebsocketBench> {
  const fake = await startFakeUpstream({ record: false })
  fake.setDefault('streamGenerateContent', streamReply([geminiResponse({ text: 'Working on it.' }), geminiResponse({ text: ' Done.', finishReason: 'STOP', usage: true })]))
  const proxy = createProxy({ password: PASSWORD, upstream: { backend: 'gemini-api', apiKey: 'bench', geminiApiEndpoint: fake.url, maxRetries: 0 } })
  const listener = createNodeListener(proxy.routeTable)
  const server = http.createServer(listener)
  server.on('upgrade', listener.upgrade)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  try {
    const results = { sse: [] as TransportFigures[], ws: [] as TransportFigures[] }
    await measure(async () => await sseSession(url, turns), turns)
    await measure(async () => await wsSession(url, turns), turns)
    for (let round = 0; round < rounds; round++) {
      results.sse.push(await measure(async () => await sseSession(url, turns), turns))
      results.ws.push(await measure(async () => await wsSession(url, turns), turns))
    }
    const medians = (list: TransportFigures[]): TransportFigures => ({ ms: median(list.map(r => r.ms)), cpuMs: median(list.map(r => r.cpuMs)), bytes: list[0].bytes })
    return { turns, rounds, sse: medians(results.sse), ws: medians(results.ws) }
  } finally {
    server.close()
    await proxy.close()
    await fake.close()
  }
}

const body = (input: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ model: 'gemini-2.5-flash', instructions: 'Be brief.', input, tools: [], store: false, stream: true, ...extra })
const userItem = (turn: number): Record<string, unknown> => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `turn ${turn} ${ITEM_TEXT}` }] })

/** One session over SSE: each turn POSTs the whole history and reads the stream to its end. */
async function sseSession (url: string, turns: number): Promise<number> {
  let history: unknown[] = []
  let bytes = 0
  for (let turn = 0; turn < turns; turn++) {
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
async function wsSession (url: string, turns: number): Promise<number> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${PASSWORD}` } } as unknown as string[])
  await new Promise<void>((resolve, reject) => { ws.onopen = () => resolve(); ws.onerror = () => reject(new Error('no upgrade')) })
  let bytes = 0
  let last: string | undefined
  for (let turn = 0; turn < turns; turn++) {
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

async function measure (session: () => Promise<number>, turns: number): Promise<TransportFigures> {
  const cpu = process.cpuUsage()
  const start = performance.now()
  const bytes = await session()
  const ms = performance.now() - start
  const used = process.cpuUsage(cpu)
  return { ms: ms / turns, cpuMs: (used.user + used.system) / 1000 / turns, bytes }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2]?.startsWith('{') === true) {
  // bench/run.ts's way (processes.runJson): a JSON spec in, the figures as JSON out, in a process of its own.
  const spec = JSON.parse(process.argv[2]) as { turns?: number, rounds?: number }
  console.log(JSON.stringify(await responsesWebsocket(spec.turns, spec.rounds)))
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const r = await responsesWebsocket(Number(process.argv[2] ?? 20), Number(process.argv[3] ?? 5))
  const row = (name: string, f: TransportFigures): string => `| ${name} | ${f.ms.toFixed(2)} | ${f.cpuMs.toFixed(2)} | ${Math.round(f.bytes / 1024)} |`
  console.log(`${r.turns} turns a session, ${r.rounds} rounds, medians; client, proxy and fake upstream in one process`)
  console.log('| transport | ms per turn | CPU ms per turn | request KiB a session |')
  console.log('| --- | --- | --- | --- |')
  console.log(row('SSE, a POST per turn', r.sse))
  console.log(row('WebSocket, one socket', r.ws))
}
