// Two members with their own keys behind one gateway on the Gemini API (the fake's files, caches, batches and
// operations), and the calls their tests make: test/proxy/resource-owners.test.ts, test/proxy/fail-closed.test.ts.
// Not a test file itself.
import type { Test } from 'tap'
import { createEmbeddedStore } from '../../lib/index.ts'
import type { Store } from '../../lib/index.ts'
import { startGateway } from './gateway.ts'
import type { StartedGateway } from './gateway.ts'
import { startFakeUpstream } from './fake-upstream.ts'
import type { FakeUpstream } from './fake-upstream.ts'
import { ADMIN, keyUser } from './gateway-keys.ts'
import type { KeyUser } from './gateway-keys.ts'
import { PASSWORD } from '../proxy/harness.ts'

export const ALL_KINDS = JSON.stringify({ member: { allow: ['batches', 'caches', 'files'] } })

export interface Setup { url: string, fake: FakeUpstream, gateway: StartedGateway, alice: KeyUser, bob: KeyUser, store: Store }

export async function setup (t: Test, env: Record<string, string> = {}): Promise<Setup> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const store = await createEmbeddedStore()
  const gateway = await startGateway({
    ...ADMIN,
    GEMINI_BACKEND: 'gemini-api',
    GEMINI_API_KEY: 'upstream-key',
    GEMINI_API_ENDPOINT: fake.url,
    GEMINI_AUTH_PASSWORD: PASSWORD,
    ...env,
  }, { store })
  t.teardown(() => gateway.close())
  const alice = await keyUser(gateway.url, 'alice_owner')
  const bob = await keyUser(gateway.url, 'bob_other')
  return { url: gateway.url, fake, gateway, alice, bob, store }
}

export interface Answer { status: number, body: any, headers: Headers }

export async function call (url: string, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url + path, {
    method,
    headers: { 'x-goog-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await res.text()
  let parsed: unknown = text
  try { parsed = JSON.parse(text) } catch {}
  return { status: res.status, body: parsed, headers: res.headers }
}

/** A resumable upload through the gateway, as the SDKs make one: start, then upload and finalize at the URL handed out. */
export async function upload (url: string, key: string, text: string): Promise<string> {
  const start = await call(url, key, 'POST', '/upload/v1beta/files', { file: { displayName: 'notes.txt', mimeType: 'text/plain' } }, {
    'x-goog-upload-protocol': 'resumable',
    'x-goog-upload-command': 'start',
    'x-goog-upload-header-content-type': 'text/plain',
  })
  if (start.status !== 200) throw new Error(`upload start: ${start.status} ${JSON.stringify(start.body)}`)
  const at = start.headers.get('x-goog-upload-url')!
  if (!at.startsWith(url)) throw new Error(`the upload URL is not the gateway's: ${at}`)
  const done = await fetch(at, { method: 'POST', headers: { 'x-goog-api-key': key, 'x-goog-upload-command': 'upload, finalize', 'x-goog-upload-offset': '0' }, body: text })
  const body = await done.json() as { file: { name: string } }
  if (done.status !== 200) throw new Error(`upload: ${done.status} ${JSON.stringify(body)}`)
  return body.file.name
}

export async function createCache (url: string, key: string, fields: Record<string, unknown> = {}): Promise<Answer> {
  return await call(url, key, 'POST', '/v1beta/cachedContents', { model: 'models/gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'a long shared context' }] }], ttl: '600s', ...fields })
}

export const generateBody = (extra: Record<string, unknown>): Record<string, unknown> => ({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], ...extra })

/** Every upstream request that touches a resource or calls a model (not the token endpoint). */
export const upstreamCalls = (fake: FakeUpstream): number => fake.requests.filter(r => r.call !== 'token').length

export function isGoogleNotFound (t: Test, answer: Answer, what: string): void {
  t.equal(answer.status, 404, what)
  t.match(answer.body, { error: { code: 404, status: 'NOT_FOUND', message: String } }, `${what}: Google's error shape`)
}
