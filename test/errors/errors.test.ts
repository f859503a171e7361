import t from 'tap'
import { fail, GatehouseError, isGatehouseError } from '../../lib/index.ts'
import { hostClientStatus } from '../../lib/errors.ts'

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
