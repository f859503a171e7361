// The failed-login limiter on its own (lib/auth/login-limiter.ts), for what no route of this service reaches
// directly: clearUser, the admin action, and the delay schedule's bounds.
import t from 'tap'
import type { Test } from 'tap'
import { createLoginLimiter, loginDelayMs } from '../../lib/auth/login-limiter.ts'
import { DEFAULT_LOGIN_LIMITS } from '../../lib/auth/options.ts'
import { createEmbeddedStore, isGatehouseError } from '../../lib/index.ts'

async function setup (t: Test) {
  let clock = Date.UTC(2030, 0, 1)
  const store = await createEmbeddedStore({ now: () => new Date(clock) })
  t.teardown(() => store.close())
  const delays: number[] = []
  const limiter = createLoginLimiter({
    attempts: store.attempts,
    limits: DEFAULT_LOGIN_LIMITS,
    now: () => new Date(clock),
    sleep: async (ms) => { delays.push(ms); clock += ms },
    emit: () => {},
  })
  /** 'ok', or the status of the refusal. */
  const tryLogin = async (user: string, address: string | undefined, correct: boolean): Promise<string> => {
    try {
      await limiter.admit(user, address)
    } catch (err) {
      return isGatehouseError(err) ? String(err.status) : 'threw'
    }
    if (correct) await limiter.succeeded(user, address)
    else await limiter.failed(user, address)
    return 'ok'
  }
  return { limiter, delays, tryLogin, store }
}

t.test("an admin's clearUser ends every lockout and delay of the account on every address, and nothing else", async t => {
  const { limiter, delays, tryLogin } = await setup(t)
  for (const address of ['192.0.2.1', '192.0.2.2', '2001:db8::1']) {
    for (let i = 0; i < 5; i++) await tryLogin('ada', address, false)
    t.equal(await tryLogin('ada', address, true), '429', `${address} is locked out of ada`)
  }
  for (let i = 0; i < 5; i++) await tryLogin('ada:192.0.2.9', '192.0.2.9', false)
  for (let i = 0; i < 5; i++) await tryLogin('adam', '192.0.2.1', false)
  await limiter.clearUser('ada')
  delays.length = 0
  for (const address of ['192.0.2.1', '192.0.2.2', '2001:db8::1']) t.equal(await tryLogin('ada', address, true), 'ok', `${address} may try ada again`)
  t.same(delays, [], 'without a delay')
  t.equal(await tryLogin('adam', '192.0.2.1', true), '429', 'another account keeps its lockout')
  t.equal(await tryLogin('ada:192.0.2.9', '192.0.2.9', true), '429', 'a username with a ":" is a different account, not a key prefix')
})

t.test('without a client address every client shares one bucket', async t => {
  const { tryLogin } = await setup(t)
  for (let i = 0; i < 5; i++) await tryLogin('nobody', undefined, false)
  t.equal(await tryLogin('nobody', undefined, true), '429')
  t.equal(await tryLogin('nobody', '192.0.2.1', true), 'ok', 'a known address is another bucket')
})

t.test('the delay is 0 below delayAfter, then 0.5 s doubling, and never above maxDelaySeconds', async t => {
  const limits = { ...DEFAULT_LOGIN_LIMITS, maxDelaySeconds: 3 }
  t.same([0, 4, 5, 6, 7, 8, 1000].map(f => loginDelayMs(f, limits)), [0, 0, 500, 1000, 2000, 3000, 3000])
  t.equal(loginDelayMs(5, { ...limits, maxDelaySeconds: 0 }), 0, 'maxDelaySeconds 0 turns delays off')
})
