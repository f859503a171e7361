// The fake Code Assist upstream in its own process, answering a short text reply (unary) and a
// 20-chunk stream, so the benchmark compares the gateway with calling the fake directly.
// Streams come two ways: back to back (every chunk written as soon as the last one went out: a test of
// CPU per stream), and, for PACED_MODEL, paced like a model generating them, PACED_CHUNK_MS apart (a real
// model's chunks come tens to hundreds of milliseconds apart; this is far quicker).
import { startFakeUpstream, streamReply, geminiResponse } from '../test/support/fake-upstream.ts'
import { PACED_CHUNK_MS, PACED_MODEL } from './workloads.ts'

const fake = await startFakeUpstream()
const chunks = Array.from({ length: 20 }, (_, i) => geminiResponse({ text: `chunk ${i} `, finishReason: i === 19 ? 'STOP' : undefined }))
fake.setDefault('streamGenerateContent', streamReply(chunks))
fake.setDefault('streamGenerateContent', streamReply(chunks, { chunkDelayMs: PACED_CHUNK_MS }), PACED_MODEL)
// Keep memory flat over a long run: the bench never reads the recorded requests.
setInterval(() => { fake.requests.length = 0 }, 1000).unref()
console.log(`listening on ${fake.url} token ${fake.tokenUri}`)
process.once('SIGTERM', () => { void fake.close().then(() => process.exit(0)) })
