// What the benchmarks send: the gateway's environment against the fake upstream, and the load of each
// measured route. Shared by `npm run bench` (bench/run.ts) and the A/B comparison (bench/ab.ts).
import type { LoadSpec } from './load.ts'

/** A load without its duration, which the runner sets. */
export type Workload = Omit<LoadSpec, 'durationMs'>

export const PROXY_PASSWORD = 'bench-proxy-password'
/** The Node flags the gateway runs with, as `npm start` and the image's CMD give them. */
export const GATEWAY_NODE_FLAGS = ['--max-semi-space-size=16']
/** The model whose streams the fake paces like a model generating them; every other streams back to back. */
export const PACED_MODEL = 'gemini-2.5-pro'
/** Milliseconds between the chunks of a paced stream. */
export const PACED_CHUNK_MS = 5
const CREDENTIALS_BODY = JSON.stringify({ username: 'benchuser', password: 'bench password 1' })
const ADMIN_PASSWORD = 'bench-admin-password'
/**
 * GEMINI_LIMITS of the bench gateway: every limit on for members, so each key call goes through the limiter's
 * checks and charges, yet far above any load here, so nothing is refused.
 */
export const BENCH_LIMITS = JSON.stringify({ member: { rpm: 1_000_000_000, tpm: 1_000_000_000_000, tokens_per_day: 1_000_000_000_000_000, concurrent: 100_000 } })

/** The allocator setting the image and `npm start` give the gateway (docs/configuration.md, "Memory"). */
export const GATEWAY_ALLOCATOR_ENV: Readonly<Record<string, string>> = Object.freeze({ MALLOC_MMAP_THRESHOLD_: '131072' })

/** The gateway's environment: embedded store, the proxy pointed at the fake upstream (its URL and token URI). */
export function gatewayEnv (fakeUrl: string, tokenUri: string): Record<string, string> {
  const credentials = { client_id: 'bench-client', client_secret: 'bench-secret', refresh_token: 'bench-refresh', token_uri: tokenUri, type: 'authorized_user' }
  return {
    ...GATEWAY_ALLOCATOR_ENV,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    AUTH_ADMIN_PASSWORD: ADMIN_PASSWORD,
    GEMINI_AUTH_PASSWORD: PROXY_PASSWORD,
    GEMINI_CREDENTIALS: JSON.stringify(credentials),
    GOOGLE_CLOUD_PROJECT: 'bench-project',
    CODE_ASSIST_ENDPOINT: fakeUrl,
  }
}

async function json (url: string, init: RequestInit): Promise<any> {
  const res = await fetch(url, init)
  const body = await res.json()
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${JSON.stringify(body)}`)
  return body
}

/** Signs the bench user up and logs in once; the load of validate and login on that gateway. */
export async function accountLoads (gatewayUrl: string): Promise<{ validate: Workload, login: Workload }> {
  const api = `${gatewayUrl}/v1/api`
  await json(`${api}/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: CREDENTIALS_BODY })
  const session = await json(`${api}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'bench' }, body: CREDENTIALS_BODY })
  return {
    validate: { url: `${api}/auth/validate?user_id=${session.user_id as string}&token=${session.access_token as string}`, headers: { 'user-agent': 'bench' }, connections: 16 },
    login: { url: `${api}/auth/login`, method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'bench' }, body: CREDENTIALS_BODY, connections: 8 },
  }
}

/**
 * A user's API key, made over HTTP as a team would (README, "Giving your team access"): the user signs up, the
 * system user promotes them to member (the level GEMINI_LIMITS limits), they log in and create a key.
 */
export async function userKey (gatewayUrl: string): Promise<string> {
  const api = `${gatewayUrl}/v1/api`
  const user = { username: 'benchkeyuser', password: 'bench key password 1' }
  const post = (body: unknown, headers: Record<string, string> = {}): RequestInit =>
    ({ method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'bench', ...headers }, body: JSON.stringify(body) })
  await json(`${api}/auth/signup`, post(user))
  const admin = await json(`${api}/auth/login`, post({ username: 'system', password: ADMIN_PASSWORD }))
  const id = await json(`${api}/auth/get-user-id?username=${user.username}`, {}) as string
  await json(`${api}/admin/user/${id}/access-level?admin_id=${admin.user_id as string}`, { ...post({ access_level: 'member' }, { token: admin.access_token }), method: 'PUT' })
  const session = await json(`${api}/auth/login`, post(user))
  const key = await json(`${api}/auth/keys?user_id=${id}`, post({ name: 'bench' }, { token: session.access_token }))
  return key.key as string
}

/** Chat completions through the gateway, streaming or not, with the operator password unless given a user's key. */
export function chatLoad (gatewayUrl: string, stream: boolean, connections: number, model = 'gemini-2.5-flash', apiKey = PROXY_PASSWORD): Workload {
  return {
    url: `${gatewayUrl}/v1/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Hello there' }] }),
    connections,
    stream,
  }
}

/** The same request sent straight to the fake upstream, as the gateway would send it. */
export function directLoad (fakeUrl: string, stream: boolean, connections: number, model = 'gemini-2.5-flash'): Workload {
  return {
    url: stream ? `${fakeUrl}/v1internal:streamGenerateContent?alt=sse` : `${fakeUrl}/v1internal:generateContent`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer fake-access-1' },
    body: JSON.stringify({ model, project: 'bench-project', user_prompt_id: 'bench', request: { contents: [{ role: 'user', parts: [{ text: 'Hello there' }] }] } }),
    connections,
    stream,
  }
}

/** One request of the hostile set: what the event-loop row sends (bench/run.ts). */
export interface HostileRequest {
  name: string
  path: string
  headers: Record<string, string>
  body: string
  /** Whether the gateway takes it (2xx) or refuses it (4xx): the 100 ms target is for requests it takes. */
  accepted: boolean
}

/**
 * Requests built to make the gateway work hard on the event loop: the inputs of hardening issue item 10 and
 * the largest ones still accepted under each limit (4096 content parts, 100000 JSON values, 10000 different
 * keys, 64 levels).
 */
export function hostileRequests (): HostileRequest[] {
  const chat = (name: string, accepted: boolean, body: unknown): HostileRequest => ({
    name,
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${PROXY_PASSWORD}` },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    accepted,
  })
  const native = (name: string, accepted: boolean, body: string): HostileRequest => ({
    name,
    path: '/v1beta/models/gemini-2.5-flash:generateContent',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': PROXY_PASSWORD },
    body,
    accepted,
  })
  const user = (content: unknown): unknown => ({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content }] })
  const emptyParts = (n: number): unknown[] => Array.from({ length: n }, () => ({ type: 'text', text: '' }))
  const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth)
  return [
    chat('40 KB of "![" in a chat message', true, user('!['.repeat(20_000) + '](data:image/png;base64,AAAA')),
    chat('400 messages of 1,000 empty parts', false, { model: 'gemini-2.5-flash', messages: Array.from({ length: 400 }, () => ({ role: 'user', content: emptyParts(1000) })) }),
    chat('4096 empty parts (the most accepted)', true, { model: 'gemini-2.5-flash', messages: Array.from({ length: 8 }, () => ({ role: 'user', content: emptyParts(512) })) }),
    chat('4096 Markdown images in one text', true, user('![a](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==)'.repeat(4096))),
    chat('a tool result of 99 000 JSON values', true, {
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '[' + '{},'.repeat(49_000) + '{}]' },
      ],
    }),
    chat('a chat body of 99 000 JSON values', true, `{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"x"}],"metadata":[${'{},'.repeat(49_000)}{}]}`),
    native('a native body of 99 000 JSON values', true, `{"contents":[{"role":"user","parts":[{"text":"x"}]}],"labels":[${'0,'.repeat(99_000)}0]}`),
    native('a native body of 9 900 different keys', true, `{"contents":[{"role":"user","parts":[{"text":"x"}]}],"labels":[${Array.from({ length: 9_900 }, (_, i) => `{"k${i}":0,"a":1,"b":2}`).join(',')}]}`),
    native('a native body of 99 000 different keys', false, `{"contents":[{"role":"user","parts":[{"text":"x"}]}],"labels":{${Array.from({ length: 99_000 }, (_, i) => `"k${i}":0`).join(',')}}}`),
    native('1 MB of "["', false, '['.repeat(1024 * 1024)),
    native('a body nested 100 000 deep', false, `{"contents":${nested(100_000)}}`),
    native('1 MB of escaped quotes in a text', true, `{"contents":[{"role":"user","parts":[{"text":"${'\\"'.repeat(512 * 1024)}"}]}]}`),
    chat('a model name with CR/LF', false, { model: 'gemini-2.5-flash\r\nX-Injected: 1', messages: [{ role: 'user', content: 'x' }] }),
  ]
}
