// The model a chat-surface request names (chat completions, embeddings): resolved and allowed by the one check
// (lib/proxy/access/model-policy.ts allowedModel), every refusal naming the `model` parameter as OpenAI's errors do.
import { isGatehouseError } from '../../errors.ts'
import { allowedModel } from '../access/model-policy.ts'
import type { ProxyCaller } from '../access/caller.ts'
import type { ModelName } from '../models/name.ts'
import type { ProxyContext } from '../context.ts'
import { withParam } from './error-body.ts'

export function chatModel (ctx: ProxyContext, caller: ProxyCaller, name: string): ModelName {
  try {
    return allowedModel(ctx, caller, name)
  } catch (err) {
    throw isGatehouseError(err) ? withParam(err, 'model') : err
  }
}
