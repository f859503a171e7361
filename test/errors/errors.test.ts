import t from 'tap'
import { fail, GatehouseError, isGatehouseError } from '../../lib/index.ts'
import { ERRORS } from '../../lib/index.ts'
import { hostClientStatus } from '../../lib/errors.ts'
import { createAuthErrorResponse } from '../../lib/auth/error-body.ts'
import { createChatErrorResponse } from '../../lib/proxy/chat/error-body.ts'
import { createMessagesErrorResponse } from '../../lib/proxy/messages/error-body.ts'
import { createNativeErrorResponse } from '../../lib/proxy/native/error-body.ts'
import { createResponsesErrorResponse } from '../../lib/proxy/responses/error-body.ts'

type ErrorsModule = typeof import('../../lib/errors.ts')

t.test('isGatehouseError recognises an error made by a second copy of lib/errors.ts (the Symbol.for brand)', async t => {
  const copy = await import(new URL('../../lib/errors.ts?copy', import.meta.url).href) as ErrorsModule
  t.not(copy.GatehouseError, GatehouseError, 'the query string loads a second copy of the module')
  const err = copy.fail('USERNAME_TAKEN')
  t.notOk(err instanceof GatehouseError, 'instanceof does not cross copies')
  t.ok(isGatehouseError(err), 'an error of the other copy is recognised by this one')
  t.ok(copy.isGatehouseError(fail('USERNAME_TAKEN')), 'and the other way round')
  t.notOk(isGatehouseError(new Error('plain')))
  t.notOk(isGatehouseError({ code: 'USERNAME_TAKEN', status: 400 }), 'a look-alike object is not one')
  t.notOk(isGatehouseError(null))
  t.same(Object.getOwnPropertySymbols(err), [], 'the brand is on the prototype, not each error')
})

t.test('param is an optional field of GatehouseError, set from ErrorExtra', async t => {
  t.equal(fail('INVALID_INPUT').param, undefined)
  t.equal(fail('INVALID_INPUT', 'bad', { param: 'messages[0].content' }).param, 'messages[0].content')
  t.equal(fail('INVALID_INPUT', 'bad', { param: null }).param, null)
})

t.test('hostClientStatus: the 4xx of a host server\'s own error (Boom, Express), nothing else', async t => {
  t.equal(hostClientStatus({ isBoom: true, output: { statusCode: 413 } }), 413)
  t.equal(hostClientStatus({ isBoom: true, output: { statusCode: 500 } }), undefined)
  t.equal(hostClientStatus({ status: 400 }), 400)
  t.equal(hostClientStatus({ statusCode: 415 }), 415)
  t.equal(hostClientStatus({ status: 302 }), undefined)
  t.equal(hostClientStatus(new Error('x')), undefined)
  t.equal(hostClientStatus(null), undefined)
  t.equal(hostClientStatus('413'), undefined)
})

t.test('every surface answers an error from outside the catalogue alike: a host\'s client error keeps its status with the catalogue\'s message, anything else is 500 INTERNAL', async t => {
  const messageOf = (body: any): string => body.detail ?? body.error.message
  const mappers = { auth: createAuthErrorResponse(), chat: createChatErrorResponse(), messages: createMessagesErrorResponse(), native: createNativeErrorResponse(), responses: createResponsesErrorResponse() }
  const cases: Array<[unknown, number, string]> = [
    [{ isBoom: true, output: { statusCode: 408 } }, 408, ERRORS.REQUEST_TIMEOUT.message],
    [{ isBoom: true, output: { statusCode: 415 } }, 415, ERRORS.UNSUPPORTED_MEDIA_TYPE.message],
    [{ status: 413, message: 'request entity too large (raw-body internals)' }, 413, ERRORS.PAYLOAD_TOO_LARGE.message],
    [{ statusCode: 400 }, 400, ERRORS.INVALID_JSON.message],
    [new Error('secret internals'), 500, ERRORS.INTERNAL.message],
  ]
  for (const [name, mapper] of Object.entries(mappers)) {
    for (const [err, status, message] of cases) {
      const answer = mapper(err)
      t.equal(answer.status, status, `${name}: ${status}`)
      t.equal(messageOf(answer.body), message, `${name}: ${status} reads the catalogue's message`)
    }
  }
})
