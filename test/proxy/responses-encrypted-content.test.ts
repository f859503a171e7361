// The sealed thought signatures of reasoning items (docs/responses.md, "Thought signatures") and the `responses`
// option's checks (docs/responses.md, "Options").
import t from 'tap'
import { ConfigurationError, createProxy } from '../../lib/index.ts'
import { createSignatureSealer } from '../../lib/proxy/responses/encrypted-content.ts'

const SECRET = 'a-gateway-secret-of-some-length'

t.test('a sealed value opens for its owner under the same secret, and for nobody else', async t => {
  const sealer = createSignatureSealer(SECRET)
  const sealed = sealer.seal('u1', { calls: { call_a: 'c2ln' } })
  t.match(sealed, /^gh1\.[A-Za-z0-9_-]+$/)
  t.notOk(sealed.includes('c2ln'), 'the signature is not readable')
  t.same(sealer.open('u1', sealed), { calls: { call_a: 'c2ln' } })
  t.same(createSignatureSealer(SECRET).open('u1', sealed), { calls: { call_a: 'c2ln' } }, 'another replica with the secret opens it')
  t.equal(sealer.open('u2', sealed), undefined, 'another owner cannot use it')
  t.equal(createSignatureSealer('another-secret-of-some-length').open('u1', sealed), undefined, 'another secret cannot open it')
  t.equal(createSignatureSealer(undefined).open('u1', sealed), undefined, 'nor a per-process key')
  t.not(sealer.seal('u1', { calls: { call_a: 'c2ln' } }), sealed, 'a fresh nonce each time')
})

t.test('a client cannot forge or alter a sealed value: every change fails to open', async t => {
  const sealer = createSignatureSealer(SECRET)
  const sealed = sealer.seal('u1', { calls: { call_a: 'c2ln' } })
  const bytes = Buffer.from(sealed.slice(4), 'base64url')
  for (let i = 0; i < bytes.length; i += 7) {
    const altered = Buffer.from(bytes)
    altered[i] ^= 1
    t.equal(sealer.open('u1', 'gh1.' + altered.toString('base64url')), undefined, `byte ${i} flipped`)
  }
  t.equal(sealer.open('u1', 'gh1.' + Buffer.from('{"c":{"call_a":"Zm9yZ2Vk"}}').toString('base64url')), undefined, 'plain JSON is no sealed value')
  t.equal(sealer.open('u1', 'opaque-openai-content'), undefined, 'another server\'s content is ignored')
  t.equal(sealer.open('u1', 'gh1.'), undefined)
})

t.test('createProxy checks the responses option once, naming the field', async t => {
  const refusal = (options: Parameters<typeof createProxy>[0]): unknown => { try { createProxy(options) } catch (err) { return err } }
  const cases: Array<[Parameters<typeof createProxy>[0], string]> = [
    [{ responses: { secret: 'short' } }, 'responses.secret'],
    [{ responses: { ttlDays: 0 } }, 'responses.ttlDays'],
    [{ responses: { store: {} as never } }, 'responses.store'],
    [{ responses: { limits: { maxItems: -1 } } }, 'responses.limits.maxItems'],
  ]
  for (const [options, option] of cases) {
    const err = refusal(options)
    t.ok(err instanceof ConfigurationError, option)
    t.match(err, { option, message: new RegExp(`createProxy: ${option.replace('.', '\\.')} must be`) })
  }
  const proxy = createProxy({ responses: { secret: SECRET, ttlDays: 7 } })
  await proxy.close()
})
