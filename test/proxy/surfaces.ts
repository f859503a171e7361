// Every model surface the proxy serves, described for test/proxy/surface-conformance.test.ts: how a client of each
// asks, and where its rules show in what reaches the fake Gemini API. Not a test file itself (only *.test.ts run).
// A surface added to the proxy adds its entry here and so gets every shared rule checked.
import type { FakeCall, FakeReply, FakeRequest } from '../support/fake-upstream.ts'

export interface Ask {
  model: string
  text?: string
  /** An http(s) image URL the request makes the proxy fetch. */
  imageUrl?: string
  /** The most output the request asks for, in the surface's own field. */
  maxOutput?: number
  /** Sampling and penalty fields, given as the surface names them when it has them. */
  temperature?: number
  presencePenalty?: number
  stream?: boolean
  /** Asks for Google Search grounding the surface's own way (a web search tool; Google's own googleSearch). */
  search?: boolean
}

export interface SurfaceUnderTest {
  /** The registry's name, which is also the usage row's surface. */
  name: string
  /** The path a model call is made at, for `model`. */
  path: (ask: Ask) => string
  /** Headers a client of the surface sends with `key` (its own way of presenting an API key). */
  auth: (key: string) => Record<string, string>
  body: (ask: Ask) => unknown
  /** The fake's call that serves the surface's model calls. */
  call: (ask: Ask) => FakeCall
  /** What reached the upstream as the most output: the generationConfig's, or the surface's own wire field. */
  sentMaxOutput: (sent: FakeRequest) => unknown
  /** Sampling and penalty fields sent, named as the upstream wire format names them. */
  sentSampling: (sent: FakeRequest) => Record<string, unknown>
  /** Whether the surface has image URLs the proxy fetches; a surface whose images are Google's to fetch has none. */
  fetchesImages: boolean
  /** Whether the surface's requests name a penalty field. */
  hasPenalty: boolean
  /** Whether a `-search` model name adds Google Search grounding (Interactions send the base model, unchanged). */
  searchVariant: boolean
  /** An answer reporting every token kind Google reports (the prompt, cached, answer, thought and tool-use tokens). */
  usageReply: FakeReply
  /** The input tokens the surface's own answer reports (cached ones included), where it reports usage itself. */
  shownInput: (json: any) => number | undefined
  /** Whether `json` is an error in the surface's own shape. */
  isError: (json: any) => boolean
  /**
   * A stream whose first event reports PARTIAL usage and whose next comes only after the client left; `seen` tells
   * from the text received that the first event got through.
   */
  abandonedStream: { reply: FakeReply, seen: (text: string) => boolean }
  /** A request naming the upstream file `uri` (Google fetches it), on a surface whose requests can; else undefined. */
  fileRef?: (ask: Ask, uri: string) => unknown
}


/** Token counts of every kind, as generateContent's usageMetadata reports them. */
export const EVERY_KIND = { prompt: 40, cached: 4, candidates: 30, thoughts: 10, toolUsePrompt: 6 }

const geminiUsage = {
  promptTokenCount: EVERY_KIND.prompt,
  cachedContentTokenCount: EVERY_KIND.cached,
  candidatesTokenCount: EVERY_KIND.candidates,
  thoughtsTokenCount: EVERY_KIND.thoughts,
  toolUsePromptTokenCount: EVERY_KIND.toolUsePrompt,
  totalTokenCount: EVERY_KIND.prompt + EVERY_KIND.candidates + EVERY_KIND.thoughts + EVERY_KIND.toolUsePrompt,
}

const geminiReply: FakeReply = {
  body: {
    candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'thinking', thought: true }, { text: 'Hello' }] }, finishReason: 'STOP' }],
    usageMetadata: geminiUsage,
    modelVersion: 'gemini-2.5-flash',
  },
}

/** The usage a stream reported before the client left: what an abandoned call is charged. */
export const PARTIAL = { prompt: 40, candidates: 3 }

/** A generateContent stream: a first event with text and partial usage, the rest held back. */
const geminiAbandoned = {
  reply: {
    chunks: [
      { candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'first' }] } }], usageMetadata: { promptTokenCount: PARTIAL.prompt, candidatesTokenCount: PARTIAL.candidates } },
      { candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'never read' }] }, finishReason: 'STOP' }], usageMetadata: geminiUsage },
    ],
    holdAfter: 1,
  },
  seen: (text: string) => text.includes('first'),
}

const generationConfig = (sent: FakeRequest): Record<string, unknown> => sent.body?.generationConfig ?? {}
const sampling = (config: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const name of ['temperature', 'presencePenalty']) if (config[name] !== undefined) out[name] = config[name]
  return out
}
const generateCall = (ask: Ask): FakeCall => ask.stream === true ? 'streamGenerateContent' : 'generateContent'
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` })
const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v)

const googleShape = (json: any): boolean => isObject(json?.error) && typeof json.error.code === 'number' && typeof json.error.status === 'string' && typeof json.error.message === 'string'
const openaiShape = (json: any): boolean => isObject(json?.error) && typeof json.error.type === 'string' && typeof json.error.message === 'string' && 'param' in json.error

export const SURFACES: readonly SurfaceUnderTest[] = [
  {
    name: 'chat',
    path: () => '/v1/chat/completions',
    auth: bearer,
    body: ask => ({
      model: ask.model,
      messages: [{ role: 'user', content: [{ type: 'text', text: ask.text ?? 'Hi' }, ...(ask.imageUrl === undefined ? [] : [{ type: 'image_url', image_url: { url: ask.imageUrl } }])] }],
      ...(ask.maxOutput === undefined ? {} : { max_tokens: ask.maxOutput }),
      ...(ask.temperature === undefined ? {} : { temperature: ask.temperature }),
      ...(ask.presencePenalty === undefined ? {} : { presence_penalty: ask.presencePenalty }),
      ...(ask.stream === true ? { stream: true, stream_options: { include_usage: true } } : {}),
      ...(ask.search === true ? { tools: [{ type: 'web_search' }] } : {}),
    }),
    call: generateCall,
    sentMaxOutput: sent => generationConfig(sent).maxOutputTokens,
    sentSampling: sent => sampling(generationConfig(sent)),
    fetchesImages: true,
    hasPenalty: true,
    searchVariant: true,
    usageReply: geminiReply,
    shownInput: json => json.usage.prompt_tokens,
    isError: json => openaiShape(json) && typeof json.error.code !== 'undefined',
    abandonedStream: geminiAbandoned,
  },
  {
    name: 'native',
    path: ask => `/v1beta/models/${ask.model}:${ask.stream === true ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
    auth: key => ({ 'x-goog-api-key': key }),
    body: ask => ({
      contents: [{ role: 'user', parts: [{ text: ask.text ?? 'Hi' }] }],
      generationConfig: {
        ...(ask.maxOutput === undefined ? {} : { maxOutputTokens: ask.maxOutput }),
        ...(ask.temperature === undefined ? {} : { temperature: ask.temperature }),
        ...(ask.presencePenalty === undefined ? {} : { presencePenalty: ask.presencePenalty }),
      },
      ...(ask.search === true ? { tools: [{ google_search: {} }] } : {}),
    }),
    call: generateCall,
    sentMaxOutput: sent => generationConfig(sent).maxOutputTokens,
    sentSampling: sent => sampling(generationConfig(sent)),
    // fileData URIs are Google's to fetch; the proxy fetches nothing for this surface.
    fetchesImages: false,
    hasPenalty: true,
    searchVariant: true,
    usageReply: geminiReply,
    // Google's own answer, passed on with its usageMetadata as it came.
    shownInput: () => undefined,
    isError: googleShape,
    fileRef: (ask, uri) => ({ contents: [{ role: 'user', parts: [{ text: 'summarise' }, { fileData: { mimeType: 'text/plain', fileUri: uri } }] }] }),
    abandonedStream: geminiAbandoned,
  },
  {
    name: 'messages',
    path: () => '/v1/messages',
    auth: key => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' }),
    body: ask => ({
      model: ask.model,
      max_tokens: ask.maxOutput ?? 1024,
      messages: [{ role: 'user', content: [{ type: 'text', text: ask.text ?? 'Hi' }, ...(ask.imageUrl === undefined ? [] : [{ type: 'image', source: { type: 'url', url: ask.imageUrl } }])] }],
      ...(ask.temperature === undefined ? {} : { temperature: ask.temperature }),
      ...(ask.stream === true ? { stream: true } : {}),
      ...(ask.search === true ? { tools: [{ type: 'web_search_20250305', name: 'web_search' }] } : {}),
    }),
    call: generateCall,
    sentMaxOutput: sent => generationConfig(sent).maxOutputTokens,
    sentSampling: sent => sampling(generationConfig(sent)),
    fetchesImages: true,
    hasPenalty: false,
    searchVariant: true,
    usageReply: geminiReply,
    // Anthropic counts cache reads apart from input_tokens.
    shownInput: json => json.usage.input_tokens + json.usage.cache_read_input_tokens,
    isError: json => json?.type === 'error' && isObject(json.error) && typeof json.error.type === 'string' && typeof json.error.message === 'string',
    abandonedStream: geminiAbandoned,
  },
  {
    name: 'responses',
    path: () => '/v1/responses',
    auth: bearer,
    body: ask => ({
      model: ask.model,
      input: [{ role: 'user', content: [{ type: 'input_text', text: ask.text ?? 'Hi' }, ...(ask.imageUrl === undefined ? [] : [{ type: 'input_image', image_url: ask.imageUrl }])] }],
      ...(ask.maxOutput === undefined ? {} : { max_output_tokens: ask.maxOutput }),
      ...(ask.temperature === undefined ? {} : { temperature: ask.temperature }),
      ...(ask.stream === true ? { stream: true } : {}),
      ...(ask.search === true ? { tools: [{ type: 'web_search' }] } : {}),
    }),
    call: generateCall,
    sentMaxOutput: sent => generationConfig(sent).maxOutputTokens,
    sentSampling: sent => sampling(generationConfig(sent)),
    fetchesImages: true,
    hasPenalty: false,
    searchVariant: true,
    usageReply: geminiReply,
    shownInput: json => json.usage.input_tokens,
    isError: json => openaiShape(json) && 'code' in json.error,
    abandonedStream: geminiAbandoned,
  },
  {
    name: 'interactions',
    path: () => '/v1beta/interactions',
    auth: key => ({ 'x-goog-api-key': key }),
    body: ask => ({
      model: ask.model,
      input: ask.text ?? 'Hi',
      generation_config: {
        ...(ask.maxOutput === undefined ? {} : { max_output_tokens: ask.maxOutput }),
        ...(ask.temperature === undefined ? {} : { temperature: ask.temperature }),
      },
      ...(ask.stream === true ? { stream: true } : {}),
      ...(ask.search === true ? { tools: [{ type: 'google_search' }] } : {}),
    }),
    call: () => 'interactions',
    sentMaxOutput: sent => sent.body?.generation_config?.max_output_tokens,
    sentSampling: sent => {
      const config = sent.body?.generation_config ?? {}
      return config.temperature === undefined ? {} : { temperature: config.temperature }
    },
    // Input images are Google's to fetch (uri parts); the proxy fetches nothing for this surface.
    fetchesImages: false,
    hasPenalty: false,
    // The model goes upstream as its base name: a `-search` suffix adds no tool here.
    searchVariant: false,
    usageReply: {
      body: {
        id: 'v1_conformance',
        object: 'interaction',
        model: 'gemini-2.5-flash',
        status: 'completed',
        steps: [{ type: 'model_output', content: [{ type: 'text', text: 'Hello' }] }],
        usage: {
          total_input_tokens: EVERY_KIND.prompt,
          total_cached_tokens: EVERY_KIND.cached,
          total_output_tokens: EVERY_KIND.candidates,
          total_thought_tokens: EVERY_KIND.thoughts,
          total_tool_use_tokens: EVERY_KIND.toolUsePrompt,
          total_tokens: EVERY_KIND.prompt + EVERY_KIND.candidates + EVERY_KIND.thoughts + EVERY_KIND.toolUsePrompt,
        },
      },
    },
    shownInput: () => undefined,
    isError: googleShape,
    fileRef: (ask, uri) => ({ model: ask.model, input: [{ type: 'text', text: 'summarise' }, { type: 'document', uri, mime_type: 'application/pdf' }] }),
    abandonedStream: {
      reply: {
        chunks: [
          { event_type: 'interaction.created', interaction: { id: 'v1_left', status: 'in_progress' } },
          { event_type: 'interaction.status_update', interaction_id: 'v1_left', status: 'in_progress', usage: { total_input_tokens: PARTIAL.prompt, total_output_tokens: PARTIAL.candidates } },
          { event_type: 'step.delta', index: 0, delta: { type: 'text', text: 'never read' } },
        ],
        holdAfter: 2,
      },
      seen: text => text.includes('total_output_tokens'),
    },
  },
]
