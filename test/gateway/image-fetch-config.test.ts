import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'

// IMAGE_FETCH_ALLOW_PRIVATE_NETWORKS and IMAGE_FETCH_ALLOWED_PORTS reach the proxy: chat image URLs on
// loopback, or on ports other than 80 and 443, are refused by default (SSRF guard), with one message for
// every refusal, and fetched when the operator allows private networks and the port.
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f1b8a20000000049454e44ae426082', 'hex')

t.test('chat image URLs on private addresses or other ports: refused by default, fetched with IMAGE_FETCH_ALLOW_PRIVATE_NETWORKS=true and the port in IMAGE_FETCH_ALLOWED_PORTS', async t => {
  const images = http.createServer((_req, res) => { res.writeHead(200, { 'content-type': 'image/png' }); res.end(PNG) })
  await new Promise<void>(resolve => images.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { images.closeAllConnections(); images.close() })
  const imagePort = (images.address() as AddressInfo).port
  const imageUrl = `http://127.0.0.1:${imagePort}/pixel.png`
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const env = {
    GEMINI_AUTH_PASSWORD: 'image-test-proxy-password',
    GEMINI_CREDENTIALS: JSON.stringify({ client_id: 'c', client_secret: 's', refresh_token: 'r', token_uri: fake.tokenUri }),
    GOOGLE_CLOUD_PROJECT: 'p',
    CODE_ASSIST_ENDPOINT: fake.url
  }
  const body = JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: imageUrl } }] }] })
  const call = async (url: string): Promise<Response> => await fetch(new URL('/v1/chat/completions', url), { method: 'POST', headers: { authorization: 'Bearer image-test-proxy-password', 'content-type': 'application/json' }, body })

  const guarded = await startGateway(env)
  t.teardown(() => guarded.close())
  const refused = await call(guarded.url)
  t.equal(refused.status, 400, 'refused by default')
  t.equal(((await refused.json()) as { error: { message: string } }).error.message, `Could not fetch the image URL ${imageUrl}`)
  t.equal(fake.calls('generateContent').length, 0, 'nothing reached the upstream')

  const privateOnly = await startGateway({ ...env, IMAGE_FETCH_ALLOW_PRIVATE_NETWORKS: 'true' })
  t.teardown(() => privateOnly.close())
  const otherPort = await call(privateOnly.url)
  t.equal(otherPort.status, 400, 'private networks allowed, but not the port')
  t.equal(((await otherPort.json()) as { error: { message: string } }).error.message, `Could not fetch the image URL ${imageUrl}`, 'the same message')
  t.match(privateOnly.logs.find(l => l.msg === 'Image URL refused'), { reason: `the port ${imagePort} is not allowed` }, 'the log says why')

  const open = await startGateway({ ...env, IMAGE_FETCH_ALLOW_PRIVATE_NETWORKS: 'true', IMAGE_FETCH_ALLOWED_PORTS: `80,443,${imagePort}` })
  t.teardown(() => open.close())
  const allowed = await call(open.url)
  t.equal(allowed.status, 200, 'fetched when allowed')
  const sent = fake.last('generateContent')?.body.request.contents[0].parts as Array<{ inlineData?: { mimeType: string, data: string } }>
  t.same(sent.find(p => p.inlineData !== undefined)?.inlineData, { mimeType: 'image/png', data: PNG.toString('base64') }, 'the image reached the upstream as inlineData')
})
