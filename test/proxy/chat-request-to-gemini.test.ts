import t from 'tap'
import { toGeminiRequest } from '../../lib/proxy/chat/request-to-gemini.ts'
import type { TranslateOptions } from '../../lib/proxy/chat/request-to-gemini.ts'
import { createChatRequestValidator } from '../../lib/proxy/chat/request-schema.ts'
import { parseModelName } from '../../lib/proxy/models/name.ts'
import { DEFAULT_SAFETY_SETTINGS } from '../../lib/proxy/safety-settings.ts'
import { newToolCallId, thoughtSignatureOf, SKIP_THOUGHT_SIGNATURE } from '../../lib/proxy/tool-call-ids.ts'
import { parseDataUrl } from '../../lib/proxy/images/data-url.ts'
import { imageTypeOf, sniffImageType } from '../../lib/proxy/images/bytes.ts'
import { textToParts } from '../../lib/proxy/chat/content.ts'
import { PNG_1X1, JPEG_HEAD } from './harness.ts'

const validate = createChatRequestValidator()
const PNG_B64 = PNG_1X1.toString('base64')
const PNG_URL = `data:image/png;base64,${PNG_B64}`

async function translate (body: Record<string, unknown>, options: Partial<TranslateOptions> = {}): Promise<Record<string, any>> {
  const request = validate({ model: 'gemini-2.5-pro', ...body })
  return await toGeminiRequest(request, parseModelName(request.model), { safetySettings: DEFAULT_SAFETY_SETTINGS, ...options })
}

async function rejection (promise: Promise<unknown>): Promise<Record<string, any>> {
  try {
    await promise
  } catch (err) {
    return err as Record<string, any>
  }
  throw new Error('expected a rejection')
}

t.test('system and developer messages become one systemInstruction joined by blank lines', async t => {
  const req = await translate({
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'hi' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
    ],
  })
  t.same(req.systemInstruction, { parts: [{ text: 'You are terse.\n\nAnswer in French.' }] })
  t.same(req.contents, [{ role: 'user', parts: [{ text: 'hi' }] }])
})

t.test('roles map to user/model and adjacent turns of one role are merged', async t => {
  const req = await translate({
    messages: [
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
      { role: 'assistant', content: 'c' },
      { role: 'assistant', content: 'd' },
      { role: 'user', content: '' },
    ],
  })
  t.same(req.contents, [
    { role: 'user', parts: [{ text: 'a' }, { text: 'b' }] },
    { role: 'model', parts: [{ text: 'c' }, { text: 'd' }] },
    { role: 'user', parts: [{ text: '' }] },
  ])
})

t.test('a conversation without user or assistant content is a 400 naming messages', async t => {
  const err = await rejection(translate({ messages: [{ role: 'system', content: 'only system' }] }))
  t.match(err, { status: 400, param: 'messages' })
})

t.test('content parts: text, Markdown data-URL images, image_url data URLs with parameters, audio, files', async t => {
  const req = await translate({
    messages: [{
      role: 'user',
      content: [
        { type: 'text', text: `look ![x](${PNG_URL}) here` },
        { type: 'image_url', image_url: { url: `data:image/png;name=dot.png;base64,${PNG_B64}`, detail: 'high' } },
        { type: 'image_url', image_url: `data:image/jpg;base64,${JPEG_HEAD.toString('base64')}` },
        { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
        { type: 'file', file: { file_data: 'JVBERi0=', filename: 'b.pdf' } },
      ],
    }],
  })
  t.same(req.contents[0].parts, [
    { text: 'look ' },
    { inlineData: { mimeType: 'image/png', data: PNG_B64 } },
    { text: ' here' },
    { inlineData: { mimeType: 'image/png', data: PNG_B64 } },
    { inlineData: { mimeType: 'image/jpeg', data: JPEG_HEAD.toString('base64') } },
    { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
    { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
    { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
  ])
})

t.test('image parts that cannot be used are a 400 naming the part, never dropped', async t => {
  const table: Array<[string, unknown, RegExp]> = [
    // (a row "declared PNG, bytes are JPEG" went with item 16 of the hardening issue: such images are sent as JPEG)
    ['declared PNG, bytes are a GIF', { type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.from('GIF89a\x01\x00').toString('base64')}` } }, /image\/gif, which the model does not accept/],
    ['declared PNG, bytes are text', { type: 'image_url', image_url: { url: 'data:image/png;base64,aGVsbG8gd29ybGQ=' } }, /not a valid image\/png/],
    ['not an image type', { type: 'image_url', image_url: { url: 'data:text/plain;base64,aGVsbG8=' } }, /not an image type/],
    ['no media type', { type: 'image_url', image_url: { url: `data:;base64,${PNG_B64}` } }, /no media type/],
    ['not base64', { type: 'image_url', image_url: { url: 'data:image/png;base64,@@@@' } }, /not base64/],
    ['no comma', { type: 'image_url', image_url: { url: 'data:image/png;base64' } }, /no comma/],
    ['empty image', { type: 'image_url', image_url: { url: 'data:image/png;base64,' } }, /empty/],
    ['ftp URL', { type: 'image_url', image_url: { url: 'ftp://example.com/a.png' } }, /http\(s\) or data:/],
    ['unknown audio format', { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'midi' } }, /Unsupported audio format/],
    ['uploaded file id', { type: 'file', file: { file_id: 'file-abc' } }, /file ids are not supported/],
  ]
  for (const [name, part, message] of table) {
    const err = await rejection(translate({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, part] }] }))
    t.match(err, { status: 400, code: 'INVALID_INPUT', message, param: /^messages\[0\]\.content\[1\]/ }, name)
  }
})

t.test('http(s) image URLs are fetched and sent inline; without a fetcher they are a 400', async t => {
  const fetched: string[] = []
  const req = await translate({
    messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://images.example/cat.png' } }] }],
  }, { fetchImage: async url => { fetched.push(url); return { mimeType: 'image/png', bytes: PNG_1X1 } } })
  t.same(fetched, ['https://images.example/cat.png'])
  t.same(req.contents[0].parts, [{ inlineData: { mimeType: 'image/png', data: PNG_B64 } }])
  const err = await rejection(translate({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://images.example/cat.png' } }] }] }))
  t.match(err, { status: 400, param: 'messages[0].content[0].image_url' })
})

t.test('Markdown images that are not valid stay text', async t => {
  t.same(textToParts('see ![a](data:image/png;base64,bm90IGEgcG5n) end'), [{ text: 'see ![a](data:image/png;base64,bm90IGEgcG5n) end' }])
  t.same(textToParts(`![a](${PNG_URL})`), [{ inlineData: { mimeType: 'image/png', data: PNG_B64 } }])
  t.same(textToParts(''), [{ text: '' }])
})

t.test('generation parameters map to generationConfig', async t => {
  const table: Array<[Record<string, unknown>, Record<string, unknown>]> = [
    [{ temperature: 0.2 }, { temperature: 0.2 }],
    [{ top_p: 0.9 }, { topP: 0.9 }],
    [{ top_k: 40 }, { topK: 40 }],
    [{ max_tokens: 100 }, { maxOutputTokens: 100 }],
    [{ max_tokens: 100, max_completion_tokens: 200 }, { maxOutputTokens: 200 }],
    [{ stop: 'END' }, { stopSequences: ['END'] }],
    [{ stop: ['a', 'b', 'c', 'd', 'e'] }, { stopSequences: ['a', 'b', 'c', 'd', 'e'] }],
    [{ n: 2 }, { candidateCount: 2 }],
    [{ seed: 7 }, { seed: 7 }],
    [{ presence_penalty: 0.5, frequency_penalty: -0.5 }, { presencePenalty: 0.5, frequencyPenalty: -0.5 }],
    [{ response_format: { type: 'json_object' } }, { responseMimeType: 'application/json' }],
    [{ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'string' } } } } } },
      { responseMimeType: 'application/json', responseJsonSchema: { type: 'object', properties: { a: { type: 'string' } } } }],
    [{ response_format: { type: 'text' } }, {}],
    [{ logprobs: true, top_logprobs: 3 }, { responseLogprobs: true, logprobs: 3 }],
    [{ modalities: ['text', 'image'] }, { responseModalities: ['TEXT', 'IMAGE'] }],
    [{ temperature: null, max_tokens: null, stop: null }, {}],
  ]
  for (const [params, expected] of table) {
    const req = await translate({ ...params, messages: [{ role: 'user', content: 'x' }] })
    const { thinkingConfig, ...config } = req.generationConfig
    t.same(config, expected, JSON.stringify(params))
    t.same(thinkingConfig, { thinkingBudget: -1, includeThoughts: true })
  }
})

t.test('reasoning_effort sets the thinking config, including none and max', async t => {
  const none = await translate({ model: 'gemini-2.5-flash', reasoning_effort: 'none', messages: [{ role: 'user', content: 'x' }] })
  t.same(none.generationConfig.thinkingConfig, { thinkingBudget: 0, includeThoughts: true })
  const max = await translate({ reasoning_effort: 'max', messages: [{ role: 'user', content: 'x' }] })
  t.same(max.generationConfig.thinkingConfig, { thinkingBudget: 32768, includeThoughts: true })
  const image = await translate({ model: 'gemini-2.5-flash-image-preview', reasoning_effort: 'high', messages: [{ role: 'user', content: 'x' }] })
  t.notOk('generationConfig' in image, 'image models never get a thinkingConfig')
})

t.test('safety settings: the default list, or the configured one', async t => {
  const req = await translate({ messages: [{ role: 'user', content: 'x' }] })
  t.equal(req.safetySettings.length, 11)
  t.ok(req.safetySettings.every((s: any) => s.threshold === 'BLOCK_NONE' && s.category.startsWith('HARM_CATEGORY_')))
  const custom = await translate({ messages: [{ role: 'user', content: 'x' }] }, { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }] })
  t.same(custom.safetySettings, [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }])
})

const WEATHER = { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } }

t.test('tools become functionDeclarations with parametersJsonSchema, tool_choice becomes toolConfig', async t => {
  const table: Array<[unknown, unknown]> = [
    [undefined, undefined],
    ['auto', { functionCallingConfig: { mode: 'AUTO' } }],
    ['none', { functionCallingConfig: { mode: 'NONE' } }],
    ['required', { functionCallingConfig: { mode: 'ANY' } }],
    [{ type: 'function', function: { name: 'get_weather' } }, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } }],
  ]
  for (const [choice, toolConfig] of table) {
    const req = await translate({ tools: [WEATHER], tool_choice: choice, messages: [{ role: 'user', content: 'x' }] })
    t.same(req.tools, [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather for a city', parametersJsonSchema: WEATHER.function.parameters }] }])
    t.same(req.toolConfig, toolConfig, JSON.stringify(choice))
  }
})

t.test('function names Gemini would refuse are a 400 naming the tool', async t => {
  const err = await rejection(translate({ tools: [{ type: 'function', function: { name: '1bad name' } }], messages: [{ role: 'user', content: 'x' }] }))
  t.match(err, { status: 400, param: 'tools[0].function.name' })
})

t.test('search rule: -search or web_search adds googleSearch, unless function tools are declared (function tools win)', async t => {
  const messages = [{ role: 'user', content: 'x' }]
  t.same((await translate({ model: 'gemini-2.5-pro-search', messages })).tools, [{ googleSearch: {} }])
  t.same((await translate({ tools: [{ type: 'web_search' }], messages })).tools, [{ googleSearch: {} }])
  let dropped = 0
  const both = await translate({ model: 'gemini-2.5-pro-search', tools: [WEATHER, { type: 'web_search' }], messages }, { onSearchDropped: () => { dropped++ } })
  t.same(both.tools, [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather for a city', parametersJsonSchema: WEATHER.function.parameters }] }])
  t.equal(dropped, 1)
  t.notOk('tools' in (await translate({ messages })), 'no tools without search or functions')
})

t.test('tool calls go back as functionCall parts and tool results as functionResponse parts in one user turn, in call order', async t => {
  const req = await translate({
    messages: [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: 'not json' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_b', content: '12:00' },
      { role: 'tool', tool_call_id: 'call_a', content: '{"temp":21}' },
      { role: 'user', content: 'thanks' },
    ],
  })
  t.same(req.contents, [
    { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
    { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }] },
    {
      role: 'user',
      parts: [
        { functionResponse: { name: 'get_weather', response: { result: { temp: 21 } } } },
        { functionResponse: { name: 'get_time', response: { result: '12:00' } } },
        { text: 'thanks' },
      ],
    },
  ])
})

t.test('assistant text comes before its tool calls; the legacy function role answers by name', async t => {
  const req = await translate({
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
      { role: 'function', name: 'lookup', content: 'done' },
    ],
  })
  t.same(req.contents[1], { role: 'model', parts: [{ text: 'Let me check.' }, { functionCall: { name: 'lookup', args: {} } }] })
  t.same(req.contents[2], { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { result: 'done' } } }] })
})

t.test('a tool result for an unknown call id is a 400 naming it', async t => {
  const err = await rejection(translate({ messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'nope', content: 'r' }] }))
  t.match(err, { status: 400, param: 'messages[1].tool_call_id' })
})

t.test('Gemini 3 thought signatures travel inside tool-call ids and come back', async t => {
  const signature = Buffer.from('opaque signature bytes \u0000\u00ff').toString('base64')
  const id = newToolCallId(signature)
  t.match(id, /^call_[0-9a-f]{24}_[A-Za-z0-9_-]+$/)
  t.equal(thoughtSignatureOf(id), signature)
  t.equal(thoughtSignatureOf(newToolCallId()), undefined)
  t.equal(thoughtSignatureOf('call_from_another_vendor'), undefined)

  const req = await translate({
    model: 'gemini-3-pro-preview',
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: id, content: 'ok' },
    ],
  })
  t.same(req.contents[1].parts, [{ functionCall: { name: 'f', args: {} }, thoughtSignature: signature }])
})

t.test('unsigned calls in the active loop get the placeholder signature on Gemini 3, not on 2.5', async t => {
  const messages = [
    { role: 'user', content: 'old question' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'x1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'x1', content: 'ok' },
    { role: 'assistant', content: 'done' },
    { role: 'user', content: 'new question' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'y1', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 'y2', type: 'function', function: { name: 'g', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'y1', content: 'ok' },
    { role: 'tool', tool_call_id: 'y2', content: 'ok' },
  ]
  const g3 = await translate({ model: 'gemini-3-pro-preview', messages })
  t.equal(g3.contents[1].parts[0].thoughtSignature, undefined, 'calls before the last user prompt are left alone')
  t.equal(g3.contents[5].parts[0].thoughtSignature, SKIP_THOUGHT_SIGNATURE, 'first call of the active turn')
  t.equal(g3.contents[5].parts[1].thoughtSignature, undefined, 'only the first call of a turn')
  const g25 = await translate({ model: 'gemini-2.5-pro', messages })
  t.equal(g25.contents[5].parts[0].thoughtSignature, undefined)
})

t.test('data URLs are parsed per RFC 2397', async t => {
  t.match(parseDataUrl('data:image/png;charset=binary;base64,iVBO'), { mimeType: 'image/png', params: { charset: 'binary' } })
  t.equal(parseDataUrl('data:text/plain,hello%20world').head.toString(), 'hello world')
  t.equal(parseDataUrl('data:text/plain,hello%20world').base64, Buffer.from('hello world').toString('base64'))
  t.equal(parseDataUrl('DATA:Image/PNG;BASE64,aGk=').mimeType, 'image/png')
  t.equal(parseDataUrl('data:image/png;base64,aG k=').base64, 'aGk=', 'whitespace in base64 is ignored')
  t.equal(parseDataUrl('data:image/png;base64,aGk%3D').base64, 'aGk=', 'percent-encoded base64 is decoded')
  t.equal(parseDataUrl('data:image/png;base64,-_8').base64, '+/8=', 'URL-safe base64 goes on in the standard alphabet, padded')
  t.equal(parseDataUrl('data:image/png;base64,aGk').base64, 'aGk=', 'missing padding is added')
  const big = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64')
  const parsed = parseDataUrl(`data:image/png;base64,${big}`)
  t.equal(parsed.base64, big, 'clean base64 passes through unchanged')
  t.same(parsed.head, Buffer.alloc(48, 7), 'only the head is decoded')
  for (const bad of ['data:,x', 'data:image/png;base64', 'data:image;base64,aGk=', 'data:image/png;foo;base64,aGk=', 'https://x']) {
    t.throws(() => parseDataUrl(bad), bad)
  }
})

t.test('image bytes are recognised by their magic numbers', async t => {
  t.equal(sniffImageType(PNG_1X1), 'image/png')
  t.equal(sniffImageType(JPEG_HEAD), 'image/jpeg')
  t.equal(sniffImageType(Buffer.from('GIF89a....')), 'image/gif')
  t.equal(sniffImageType(Buffer.from('RIFF\0\0\0\0WEBPVP8 ')), 'image/webp')
  t.equal(sniffImageType(Buffer.from('\0\0\0\x18ftypheic')), 'image/heic')
  t.equal(sniffImageType(Buffer.from('hello')), undefined)
  t.equal(sniffImageType(Buffer.from('\0\0\0\x1cftypmif1\0\0\0\0mif1heic')), 'image/heic', 'a HEIC brand among the compatible ones')
  t.equal(sniffImageType(Buffer.from('\0\0\0\x18ftypmif1\0\0\0\0mif1')), 'image/heif')
  t.equal(sniffImageType(Buffer.from('\0\0\0\x1cftypavif\0\0\0\0avifmif1')), 'image/avif', 'AVIF names mif1 too, and is not HEIF')
  // Item 16 of the hardening issue: the bytes decide. Types the upstream cannot take are refused, whatever their label
  // (svg used to pass unchecked).
  t.match(imageTypeOf('image/svg+xml', Buffer.from('<svg/>')), { error: /not a valid image\/svg\+xml/ })
  t.same(imageTypeOf('image/svg+xml', PNG_1X1), { mimeType: 'image/png' })
  t.same(imageTypeOf('image/heif', Buffer.from('\0\0\0\x18ftypheic')), { mimeType: 'image/heic' })
  t.match(imageTypeOf('image/gif', Buffer.from('GIF89a....')), { error: /image\/gif, which the model does not accept/ })
})

t.test('messages: what the quick check lets through is exactly what the role schemas accept', async t => {
  const rows: Array<[string, Record<string, unknown>, string | null]> = [
    ['user text', { role: 'user', content: 'hi' }, null],
    ['empty text', { role: 'system', content: '' }, null],
    ['developer with a name', { role: 'developer', content: 'x', name: 'ops' }, null],
    ['name null', { role: 'user', content: 'x', name: null }, null],
    ['unknown fields pass through', { role: 'user', content: 'x', cache_control: { type: 'ephemeral' } }, null],
    ['assistant text, tool_calls null', { role: 'assistant', content: 'x', tool_calls: null }, null],
    ['function message', { role: 'function', content: 'x', name: 'f' }, null],
    ['empty name', { role: 'user', content: 'x', name: '' }, 'messages[0].name'],
    ['name a number', { role: 'user', content: 'x', name: 5 }, 'messages[0].name'],
    ['assistant with a malformed tool call', { role: 'assistant', content: 'x', tool_calls: [{ id: 'a' }] }, 'messages[0].tool_calls[0].function'],
    ['tool message without its call id', { role: 'tool', content: 'x' }, 'messages[0].tool_call_id'],
    ['role not a string', { role: ['user'], content: 'x' }, 'messages[0].role'],
    // content parts and tool calls, which the quick check also reads
    ['every part type', { role: 'user', content: [{ type: 'text', text: '' }, { type: 'refusal', refusal: '' }, { type: 'image_url', image_url: 'https://x/a.png' }, { type: 'image_url', image_url: { url: 'https://x/a.png', detail: null } }, { type: 'input_audio', input_audio: { data: 'AA==', format: 'wav' } }, { type: 'file', file: { file_id: 'f' } }, { type: 'file', file: { file_data: 'AA==', filename: 'a.pdf', extra: 1 } }] }, null],
    ['a text part without text', { role: 'user', content: [{ type: 'text' }] }, 'messages[0].content[0].text'],
    ['an empty image URL', { role: 'user', content: [{ type: 'image_url', image_url: '' }] }, 'messages[0].content[0].image_url'],
    ['an image object without url', { role: 'user', content: [{ type: 'image_url', image_url: { detail: 'low' } }] }, 'messages[0].content[0].image_url'],
    ['an empty detail', { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x', detail: '' } }] }, 'messages[0].content[0].image_url'],
    ['an image_url that is an array', { role: 'user', content: [{ type: 'image_url', image_url: ['https://x'] }] }, 'messages[0].content[0].image_url'],
    ['audio without format', { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA==' } }] }, 'messages[0].content[0].input_audio.format'],
    ['audio with empty data', { role: 'user', content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }] }, 'messages[0].content[0].input_audio.data'],
    ['a file with neither data nor id', { role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf' } }] }, 'messages[0].content[0].file'],
    ['a file with an empty name', { role: 'user', content: [{ type: 'file', file: { file_id: 'f', filename: '' } }] }, 'messages[0].content[0].file.filename'],
    ['a part that is null', { role: 'user', content: [null] }, 'messages[0].content[0]'],
    ['an unknown part type', { role: 'user', content: [{ type: 'video' }] }, 'messages[0].content[0].type'],
    ['system content null', { role: 'system', content: null }, 'messages[0].content'],
    ['assistant with tool calls', { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '' } }, { id: 'd', function: { name: 'g' } }] }, null],
    ['assistant without content', { role: 'assistant', tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{}' } }] }, null],
    ['a tool call of another type', { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'code', function: { name: 'f' } }] }, 'messages[0].tool_calls[0].type'],
    ['a tool call type null', { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: null, function: { name: 'f' } }] }, 'messages[0].tool_calls[0].type'],
    ['a tool call with an empty id', { role: 'assistant', content: null, tool_calls: [{ id: '', function: { name: 'f' } }] }, 'messages[0].tool_calls[0].id'],
    ['arguments null', { role: 'assistant', content: null, tool_calls: [{ id: 'c', function: { name: 'f', arguments: null } }] }, 'messages[0].tool_calls[0].function.arguments'],
    ['tool_calls not an array', { role: 'assistant', content: 'x', tool_calls: {} }, 'messages[0].tool_calls'],
    ['a tool message with parts', { role: 'tool', tool_call_id: 'c', content: [{ type: 'text', text: 'r' }] }, null],
    ['a tool message with an empty call id', { role: 'tool', tool_call_id: '', content: 'r' }, 'messages[0].tool_call_id'],
    ['a function message with null content', { role: 'function', name: 'f', content: null }, null],
    ['a function message without content', { role: 'function', name: 'f' }, 'messages[0].content'],
  ]
  for (const [name, message, param] of rows) {
    let error: any
    try {
      validate({ model: 'gemini-2.5-pro', messages: [message] })
    } catch (err) {
      error = err
    }
    if (param === null) t.equal(error, undefined, `${name}: accepted`)
    else t.match(error, { status: 400, param }, `${name}: refused, naming ${param}`)
  }
})
