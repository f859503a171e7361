// Input meant to break the proxy: each case is a clean 4xx/5xx in the surface's error shape,
// answered quickly, and nothing reaches the upstream.
import t from 'tap'
import { startProxy, startSilentServer, startImageServer, closedPort, PASSWORD, PNG_1X1, JPEG_HEAD } from './harness.ts'

const AUTH = { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }

async function chat (url: string, body: string | Buffer): Promise<{ status: number, json: any, ms: number }> {
  const started = Date.now()
  const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: AUTH, body })
  return { status: res.status, json: await res.json(), ms: Date.now() - started }
}

function userWith (part: unknown): string {
  return JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, part] }] })
}

t.test('malformed JSON and wrong types are 400 invalid_request_error, naming the param where there is one', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const table: Array<[string, string, string | null, RegExp?]> = [
    ['truncated JSON', '{"model": "gemini-2.5-pro", "messages": [', null, /Invalid JSON/],
    ['not JSON at all', 'hello', null, /Invalid JSON/],
    ['empty body', '', null, /empty/],
    ['a JSON array', '[]', null, /JSON object/],
    ['JSON null', 'null', null, /JSON object/],
    ['model is a number', JSON.stringify({ model: 5, messages: [{ role: 'user', content: 'x' }] }), 'model'],
    ['model missing', JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }), 'model'],
    ['messages not an array', JSON.stringify({ model: 'gemini-2.5-pro', messages: 'hi' }), 'messages'],
    ['messages empty', JSON.stringify({ model: 'gemini-2.5-pro', messages: [] }), 'messages'],
    ['unknown role', JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'wizard', content: 'x' }] }), 'messages[0].role'],
    ['user content null', JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: null }] }), 'messages[0].content'],
    ['content a number', JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 42 }] }), 'messages[0].content'],
    ['unknown part type', JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: [{ type: 'video' }] }] }), 'messages[0].content[0].type'],
    ['stream as a string', JSON.stringify({ model: 'gemini-2.5-pro', stream: 'yes', messages: [{ role: 'user', content: 'x' }] }), 'stream'],
    ['temperature as a string', JSON.stringify({ model: 'gemini-2.5-pro', temperature: '0.5', messages: [{ role: 'user', content: 'x' }] }), 'temperature'],
    ['six stop sequences', JSON.stringify({ model: 'gemini-2.5-pro', stop: ['a', 'b', 'c', 'd', 'e', 'f'], messages: [{ role: 'user', content: 'x' }] }), 'stop'],
    ['unknown reasoning_effort', JSON.stringify({ model: 'gemini-2.5-pro', reasoning_effort: 'extreme', messages: [{ role: 'user', content: 'x' }] }), 'reasoning_effort'],
    ['tool message without id', JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'tool', content: 'x' }] }), 'messages[0].tool_call_id'],
    ['tool call without function', JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'a' }] }] }), 'messages[0].tool_calls[0].function'],
    ['json_schema without schema object', JSON.stringify({ model: 'gemini-2.5-pro', response_format: { type: 'json_schema' }, messages: [{ role: 'user', content: 'x' }] }), 'response_format.json_schema'],
  ]
  for (const [name, body, param, message] of table) {
    const res = await chat(h.url, body)
    t.equal(res.status, 400, name)
    t.match(res.json, { error: { type: 'invalid_request_error', code: 400, param } }, name)
    if (message !== undefined) t.match(res.json.error.message, message, name)
  }
  t.equal(h.fake.calls('generateContent').length, 0)
})

t.test('a huge messages array is refused with a 400 before any work', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const messages = Array.from({ length: 5000 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: 'x' }))
  const res = await chat(h.url, JSON.stringify({ model: 'gemini-2.5-pro', messages }))
  t.equal(res.status, 400)
  t.match(res.json, { error: { param: 'messages', message: /2048/ } })
})

t.test('a body over the size limit is a 413 in the surface\'s shape', async t => {
  const h = await startProxy(t, { backendName: 'code-assist', maxBodyBytes: 64 * 1024 })
  const big = JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x'.repeat(100 * 1024) }] })
  const res = await chat(h.url, big)
  t.equal(res.status, 413)
  t.match(res.json, { error: { type: 'invalid_request_error', code: 413 } })
  const native = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': PASSWORD }, body: big })
  t.equal(native.status, 413)
  t.match(await native.json(), { error: { code: 413, status: 'INVALID_ARGUMENT' } })
})

t.test('native: malformed JSON and non-object bodies are 400 INVALID_ARGUMENT', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  for (const body of ['{"contents": [', '"text"', '[1,2]']) {
    const res = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': PASSWORD }, body })
    t.equal(res.status, 400, body)
    t.match(await res.json(), { error: { code: 400, status: 'INVALID_ARGUMENT' } }, body)
  }
  const count = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:countTokens`, { method: 'POST', headers: { 'x-goog-api-key': PASSWORD }, body: '{"contents": "nope"}' })
  t.equal(count.status, 400)
  await count.arrayBuffer()
  t.equal(h.fake.requests.filter(r => r.call === 'generateContent' || r.call === 'countTokens').length, 0)
})

// Item 16 of the hardening issue: a mislabelled image is no longer refused (see the next test); this one used to
// hold a row "JPEG bytes declared as PNG".
t.test('image data URLs whose bytes are no image the model accepts are a 400 naming the part', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const table: Array<[string, string, RegExp]> = [
    ['text declared as PNG', `data:image/png;base64,${Buffer.from('<?php system($_GET[0]); ?>').toString('base64')}`, /not a valid image\/png/],
    ['a PDF as image_url', 'data:application/pdf;base64,JVBERi0xLjQK', /not an image type/],
    ['HTML with an image type', `data:image/gif;base64,${Buffer.from('<html>').toString('base64')}`, /not a valid image\/gif/],
    ['a GIF, which Gemini does not take', `data:image/gif;base64,${Buffer.from('GIF89a\x01\x00\x01\x00').toString('base64')}`, /image\/gif, which the model does not accept/],
    ['SVG', `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64')}`, /not a valid image\/svg\+xml/],
    ['garbage base64', 'data:image/png;base64,!!!!', /not base64/],
  ]
  for (const [name, url, message] of table) {
    const res = await chat(h.url, userWith({ type: 'image_url', image_url: { url } }))
    t.equal(res.status, 400, name)
    t.match(res.json, { error: { type: 'invalid_request_error', param: 'messages[0].content[1].image_url', message } }, name)
  }
  t.equal(h.fake.calls('generateContent').length, 0)
})

t.test('an image whose declared type differs from its bytes is sent with the type its bytes show', async t => {
  const h = await startProxy(t, { backendName: 'code-assist', imageFetch: { timeoutMs: 1000, allowPrivateNetworks: true } })
  const png = PNG_1X1.toString('base64')
  const jpeg = JPEG_HEAD.toString('base64')
  const mislabelled = await startImageServer(t, PNG_1X1, 'image/jpeg')
  const res = await chat(h.url, JSON.stringify({
    model: 'gemini-2.5-flash',
    messages: [{
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${png}` } },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${jpeg}` } },
        { type: 'text', text: `look ![a](data:image/webp;base64,${png}) here` },
        { type: 'file', file: { file_data: `data:image/jpeg;base64,${png}` } },
        { type: 'file', file: { file_data: png, filename: 'photo.jpg' } },
        { type: 'image_url', image_url: { url: mislabelled } },
      ],
    }],
  }))
  t.equal(res.status, 200)
  const sent = h.fake.last('generateContent')!.body.request.contents[0].parts.map((p: any) => p.inlineData?.mimeType ?? 'text')
  t.same(sent, ['image/png', 'image/jpeg', 'text', 'image/png', 'text', 'image/png', 'image/png', 'image/png'])
})

t.test('http(s) image URLs are fetched; closed ports, silent servers, non-images and oversized images are a clean 400 within the time limit', async t => {
  // The image servers are on 127.0.0.1, which the default guard refuses (see image-fetch-guard.test.ts).
  const h = await startProxy(t, { backendName: 'code-assist', imageFetch: { timeoutMs: 500, maxBytes: 1024, allowPrivateNetworks: true } })

  const good = await startImageServer(t, PNG_1X1, 'image/png')
  const ok = await chat(h.url, userWith({ type: 'image_url', image_url: { url: good } }))
  t.equal(ok.status, 200)
  t.same(h.fake.last('generateContent')!.body.request.contents[0].parts[1], { inlineData: { mimeType: 'image/png', data: PNG_1X1.toString('base64') } })

  const port = await closedPort()
  const refused = await chat(h.url, userWith({ type: 'image_url', image_url: { url: `http://127.0.0.1:${port}/a.png` } }))
  t.equal(refused.status, 400)
  t.match(refused.json, { error: { type: 'invalid_request_error', param: 'messages[0].content[1].image_url', message: `Could not fetch the image URL http://127.0.0.1:${port}/a.png` } })

  const silent = await startSilentServer(t)
  const slow = await chat(h.url, userWith({ type: 'image_url', image_url: { url: `${silent}/slow.png?sig=secret` } }))
  t.equal(slow.status, 400)
  t.equal(slow.json.error.message, `Could not fetch the image URL ${silent}/slow.png`, 'the same answer as a closed port')
  t.notMatch(slow.json.error.message, /secret/, 'query strings (signed URLs) are not echoed')
  t.ok(slow.ms < 3000, `answered in ${slow.ms} ms`)

  const html = await startImageServer(t, Buffer.from('<html></html>'), 'text/html')
  const notImage = await chat(h.url, userWith({ type: 'image_url', image_url: { url: html } }))
  t.equal(notImage.status, 400)
  t.match(notImage.json.error.message, /^Could not fetch the image URL http:\/\/127\.0\.0\.1:\d+\/image$/, 'what the server said is not told (the uniform answer)')

  const huge = await startImageServer(t, Buffer.concat([PNG_1X1, Buffer.alloc(4096)]), 'image/png')
  const tooBig = await chat(h.url, userWith({ type: 'image_url', image_url: { url: huge } }))
  t.equal(tooBig.status, 400)
  t.match(tooBig.json.error.message, /larger than 1024 bytes/)

  t.equal(h.fake.calls('generateContent').length, 1, 'only the good image reached the upstream')
})

t.test('the images fetched for one request may total no more than a request body may hold', async t => {
  const h = await startProxy(t, { backendName: 'code-assist', maxBodyBytes: 6000, imageFetch: { timeoutMs: 1000, maxBytes: 4000, allowPrivateNetworks: true } })
  const image = await startImageServer(t, Buffer.concat([PNG_1X1, Buffer.alloc(2500)]), 'image/png')
  const one = await chat(h.url, JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }] }] }))
  t.equal(one.status, 200, 'one image of about 2.6 KB is within 6000 bytes')
  const parts = Array.from({ length: 3 }, () => ({ type: 'image_url', image_url: { url: image } }))
  const three = await chat(h.url, JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: parts }] }))
  t.equal(three.status, 400, 'three of them are not, although each is under the 4000-byte limit of one image')
  t.match(three.json, { error: { type: 'invalid_request_error', message: /the images of this request total more than 6000 bytes/ } })
  t.equal(h.fake.calls('generateContent').length, 1, 'the refused request never reached the upstream')
})

t.test('requests with image URLs take their share of the body budget while their images are fetched', async t => {
  const silent = await startSilentServer(t)
  // Above 1 MiB: smaller reservations are not counted (see lib/http/body-budget.ts).
  const MiB = 1024 * 1024
  const h = await startProxy(t, { backendName: 'code-assist', maxBodyBytes: 3 * MiB, maxBodyBytesInFlight: 3 * MiB, imageFetch: { timeoutMs: 400, maxBytes: 2 * MiB, allowPrivateNetworks: true } })
  const budget = h.proxy.routes[0].bodyBudget!
  const pending = chat(h.url, userWith({ type: 'image_url', image_url: { url: `${silent}/slow.png` } }))
  const deadline = Date.now() + 2000
  while (budget.reserved === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 5))
  t.equal(budget.reserved, 2 * MiB, 'the request holds one image\'s worth while it fetches')
  t.equal((await pending).status, 400)
  t.equal(budget.reserved, 0, 'and gives it back once it has answered')
})

t.test('a request with a large body and an image URL is not kept waiting for room it holds itself', async t => {
  const MiB = 1024 * 1024
  const h = await startProxy(t, { backendName: 'code-assist', maxBodyBytes: 3 * MiB, maxBodyBytesInFlight: 3 * MiB, imageFetch: { timeoutMs: 1000, maxBytes: 2 * MiB, allowPrivateNetworks: true } })
  const image = await startImageServer(t, PNG_1X1, 'image/png')
  const res = await chat(h.url, JSON.stringify({
    model: 'gemini-2.5-pro',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(2 * MiB) }, { type: 'image_url', image_url: { url: image } }] }],
  }))
  t.equal(res.status, 200)
  t.ok(res.ms < 5000, `answered in ${res.ms} ms`)
  t.equal(h.proxy.routes[0].bodyBudget!.reserved, 0)
})

t.test('one request cannot make the proxy fetch more image URLs than the limit', async t => {
  const h = await startProxy(t, { backendName: 'code-assist', imageFetch: { timeoutMs: 500, maxPerRequest: 2 } })
  const parts = Array.from({ length: 3 }, (_, i) => ({ type: 'image_url', image_url: { url: `http://127.0.0.1:9/${i}.png` } }))
  const res = await chat(h.url, JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: parts }] }))
  t.equal(res.status, 400)
  t.match(res.json, { error: { param: 'messages', message: /At most 2 image URLs/ } })
})

t.test('names that are not models are a 404, not an upstream call', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  for (const model of ['../../etc/passwd', 'gpt-4o', 'gemini-2.5-pro-nothinking-maxthinking']) {
    const res = await chat(h.url, JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }))
    t.equal(res.status, 404, model)
    t.match(res.json, { error: { code: 'model_not_found', param: 'model' } })
  }
  t.equal(h.fake.calls('generateContent').length, 0)
})

t.test('model names are checked before use: control characters, CR/LF, NUL, slashes or 129 characters never reach the upstream', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const names = ['gemini-2.5-flash\r\nX-Injected: 1', 'gemini-2.5-flash\n', 'gemini-2.5-flash\u0000', 'gemini-2.5-\tflash', 'gemini-2.5-flash\u007f',
    'gemini-2.5-pro/../../v1beta/files', 'gemini-' + 'a'.repeat(122), 'gemini-2.5-flash?alt=x']
  for (const model of names) {
    const res = await chat(h.url, JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }))
    t.equal(res.status, 404, JSON.stringify(model))
    t.match(res.json, { error: { type: 'invalid_request_error', code: 'model_not_found', param: 'model', message: /at most 128 characters/ } }, JSON.stringify(model))
    const native = await fetch(`${h.url}/v1beta/models/${encodeURIComponent(model)}:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': PASSWORD }, body: '{"contents":[]}' })
    t.equal(native.status, 404, `native ${JSON.stringify(model)}`)
    t.match(await native.json(), { error: { code: 404, status: 'NOT_FOUND' } }, `native ${JSON.stringify(model)}`)
  }
  const longest = await chat(h.url, JSON.stringify({ model: 'gemini-' + 'a'.repeat(121), messages: [{ role: 'user', content: 'x' }] }))
  t.equal(longest.status, 200, '128 characters are fine')
  t.equal(h.fake.calls('generateContent').length, 1, 'only that one reached the upstream')
  t.ok(h.fake.requests.every(r => !/[\r\n\0]/.test(String(r.headers['user-agent']))))
})
