// Tenant isolation of interactions (docs/interactions.md, "Owners"): an interaction is its creator's; another member
// naming it (get, cancel, delete, or previous_interaction_id) gets Google's 404 made by the gateway, with nothing sent
// upstream; the operator password reaches every one.
import t from 'tap'
import { GoogleGenAI } from '@google/genai'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import { ADMIN, keyUser } from '../support/gateway-keys.ts'
import { PASSWORD } from './harness.ts'

interface Answer { status: number, body: any }

async function call (url: string, key: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(url + path, {
    method,
    headers: { 'x-goog-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  let parsed: unknown = text
  try { parsed = JSON.parse(text) } catch {}
  return { status: res.status, body: parsed }
}

t.test('another member cannot get, cancel, delete or continue an interaction (404 before the upstream); the operator reaches all', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gateway = await startGateway({ ...ADMIN, GEMINI_BACKEND: 'gemini-api', GEMINI_API_KEY: 'upstream-key', GEMINI_API_ENDPOINT: fake.url, GEMINI_AUTH_PASSWORD: PASSWORD })
  t.teardown(() => gateway.close())
  const url = gateway.url
  const alice = await keyUser(url, 'alice_owner')
  const bob = await keyUser(url, 'bob_other')

  const made = await call(url, alice.key, 'POST', '/v1beta/interactions', { model: 'gemini-4-argon', input: 'mine' })
  t.equal(made.status, 200)
  const id = made.body.id as string
  const upstream = fake.calls('interactions').length

  for (const [method, path, body] of [
    ['GET', `/v1beta/interactions/${id}`],
    ['POST', `/v1beta/interactions/${id}/cancel`],
    ['DELETE', `/v1beta/interactions/${id}`],
    ['POST', '/v1beta/interactions', { model: 'gemini-4-argon', input: 'and then', previous_interaction_id: id }],
  ] as Array<[string, string, unknown?]>) {
    const answer = await call(url, bob.key, method, path, body)
    t.equal(answer.status, 404, `${method} ${path} by another member`)
    t.match(answer.body, { error: { code: 404, status: 'NOT_FOUND', message: `interactions/${id} is not found` } }, 'Google\'s error shape')
  }
  t.equal(fake.calls('interactions').length, upstream, 'nothing went upstream')

  const continued = await call(url, alice.key, 'POST', '/v1beta/interactions', { model: 'gemini-4-argon', input: 'and then', previous_interaction_id: id })
  t.equal(continued.status, 200, 'the creator continues it')
  t.equal(fake.last('interactions')!.body.previous_interaction_id, id)

  const operatorGet = await call(url, PASSWORD, 'GET', `/v1beta/interactions/${id}`)
  t.equal(operatorGet.status, 200, 'the operator reads it')
  t.equal((await call(url, PASSWORD, 'DELETE', `/v1beta/interactions/${continued.body.id as string}`)).status, 200, 'the operator deletes it')
  t.equal((await call(url, alice.key, 'DELETE', `/v1beta/interactions/${id}`)).status, 200, 'the creator deletes hers')
  t.equal((await call(url, alice.key, 'GET', `/v1beta/interactions/${id}`)).status, 404, 'and it is gone, its record with it')

  const logs = gateway.logs
  t.match(logs.filter(l => l.msg === 'upstream resource created' && l.resource === `interactions/${id}`), [{ userId: alice.userId, keyId: alice.keyId }], 'the creation is logged with the user and key id')
  t.ok(logs.some(l => l.msg === 'upstream resource deleted' && l.resource === `interactions/${id}` && l.keyId === alice.keyId), 'the deletion too')
  t.notOk(JSON.stringify(logs).includes(alice.key), 'never the key')
})

t.test('an interaction naming another member\'s uploaded file by its uri is a 404 before the upstream; the owner may name it', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gateway = await startGateway({ ...ADMIN, GEMINI_BACKEND: 'gemini-api', GEMINI_API_KEY: 'upstream-key', GEMINI_API_ENDPOINT: fake.url, GEMINI_AUTH_PASSWORD: PASSWORD, LOG_LEVEL: 'silent' })
  t.teardown(() => gateway.close())
  const url = gateway.url
  const alice = await keyUser(url, 'alice_files')
  const bob = await keyUser(url, 'bob_files')
  const ai = new GoogleGenAI({ apiKey: alice.key, httpOptions: { baseUrl: url, apiVersion: 'v1beta', timeout: 20000 } })
  const file = await ai.files.upload({ file: new Blob(['notes'], { type: 'text/plain' }), config: { mimeType: 'text/plain' } })
  const body = (uri: string): Record<string, unknown> => ({ model: 'gemini-4-argon', input: [{ type: 'text', text: 'summarise' }, { type: 'document', uri, mime_type: 'text/plain' }] })
  for (const uri of [file.uri as string, file.name as string]) {
    const refused = await call(url, bob.key, 'POST', '/v1beta/interactions', body(uri))
    t.equal(refused.status, 404, `named as ${uri}`)
    t.match(refused.body, { error: { status: 'NOT_FOUND', message: `${file.name as string} is not found` } })
  }
  t.equal(fake.calls('interactions').length, 0, 'nothing went upstream')
  t.equal((await call(url, alice.key, 'POST', '/v1beta/interactions', body(file.uri as string))).status, 200, 'the owner names her file')
})
