// The one orchestration of a model call (docs/model-proxy.md, "One lifecycle for every model call"): authenticate,
// parse, resolve and admit (beginModelCall: policy, reservation, image hold), translate, call the upstream under the
// model's request rules (or forward a body in Google's own format, its answer metered as it passes), answer or stream
// with the CORS and rate headers. A surface declares its operation (./surface.ts); the order and the headers are
// owned here, so no surface can skip a step: no other module begins a model call (test/lint/one-orchestration.test.ts).
import type { Handler, HandlerRequest, HandlerResponse } from '../../http/contract.ts'
import type { ProxyCaller } from '../access/caller.ts'
import { CORS_HEADERS } from '../access/client-auth.ts'
import type { ProxyContext } from '../context.ts'
import { SSE_HEADERS } from '../routes-stream.ts'
import { longDecoding } from '../models/continuation.ts'
import { beginModelCall, meteredAnswer } from './lifecycle.ts'
import type { ModelCall } from './lifecycle.ts'
import type { CountOperation, EmbedOperation, ForwardOperation, GenerateOperation, ModelOperation, ParsedCall, SurfaceDeclaration } from './surface.ts'

type Answer = (body: unknown, call: ModelCall) => HandlerResponse

const answered: Answer = (body, call) => ({ status: 200, headers: { ...CORS_HEADERS, ...call.headers }, body })

async function generate (op: GenerateOperation, parsed: ParsedCall, call: ModelCall): Promise<HandlerResponse> {
  const { request, meta } = await op.toGemini(parsed, call)
  if (parsed.stream !== true) {
    const answer = await call.generate(request, response => op.fromGemini(response, meta))
    return answered(op.respond === undefined ? answer : await op.respond(answer, meta), call)
  }
  const stream = await call.stream(request, op.streamTranslator(meta), op.beforeStreamEnd?.(meta))
  return { status: 200, headers: { ...SSE_HEADERS, ...call.headers }, body: stream }
}

async function countTokens (op: CountOperation, parsed: ParsedCall, call: ModelCall): Promise<HandlerResponse> {
  return answered(op.fromGemini(await call.countTokens(await op.toGemini(parsed, call))), call)
}

async function embed (op: EmbedOperation, parsed: ParsedCall, call: ModelCall): Promise<HandlerResponse> {
  return answered(op.fromGemini(await call.embed(op.toGemini(parsed, call)), parsed, call), call)
}

async function forward (op: ForwardOperation, parsed: ParsedCall, call: ModelCall, req: HandlerRequest, caller: ProxyCaller): Promise<HandlerResponse> {
  const { answer, reader, headers } = await op.forward(parsed, call, req, caller)
  return { status: answer.status, headers: { ...CORS_HEADERS, ...headers, ...call.headers }, body: meteredAnswer(call.metered, answer, req.signal, reader) }
}

/** The handler of a model route: `op` run for `surface` on the proxy's one lifecycle. */
export function runModelCall (ctx: ProxyContext, surface: SurfaceDeclaration, op: ModelOperation): Handler {
  // Counting and embedding produce no output: nothing is reserved for it, and counting is charged nothing.
  const noOutput = op.kind === 'countTokens' || op.kind === 'embed'
  const unreported = op.kind === 'countTokens' ? 'nothing' as const : undefined
  return async function modelCall (req): Promise<HandlerResponse> {
    const caller = await ctx.checkAuth(req)
    const parsed = await op.parse(req, caller)
    const call = await beginModelCall(ctx, req, caller, {
      surface: surface.name,
      model: parsed.model,
      tuned: parsed.tuned,
      maxOutputTokens: parsed.maxOutputTokens,
      outputCount: parsed.outputCount,
      referencedInputTokens: parsed.referencedInputTokens,
      noOutput: noOutput || parsed.noOutput === true,
      unreported: unreported ?? parsed.unreported,
      readBytes: parsed.readBytes,
      modelRefused: surface.modelRefused,
      upstream: surface.answersWhole === true && op.kind === 'generate' ? (backend, model) => longDecoding(backend, model.spec) : undefined,
      imageUrls: parsed.imageUrls,
    })
    switch (op.kind) {
      case 'generate': return await generate(op, parsed, call)
      case 'countTokens': return await countTokens(op, parsed, call)
      case 'embed': return await embed(op, parsed, call)
      case 'forward': return await forward(op, parsed, call, req, caller)
    }
  }
}
