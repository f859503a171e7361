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

/** The gateway's environment: embedded store, the proxy pointed at the fake upstream (its URL and token URI). */
export function gatewayEnv (fakeUrl: string, tokenUri: string): Record<string, string> {
  const credentials = { client_id: 'bench-client', client_secret: 'bench-secret', refresh_token: 'bench-refresh', token_uri: tokenUri, type: 'authorized_user' }
  return {
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    AUTH_ADMIN_PASSWORD: 'bench-admin-password',
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

/** Chat completions through the gateway, streaming or not. */
export function chatLoad (gatewayUrl: string, stream: boolean, connections: number, model = 'gemini-2.5-flash'): Workload {
  return {
    url: `${gatewayUrl}/v1/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${PROXY_PASSWORD}` },
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
