// Type tests of the rate limiter's public API (issue 13): what the proxy wiring and a library host rely on.
import { describe, expect, test } from 'tstyche'
import { createRateLimiter, OPTION_RULES } from 'gatehouse'
import type { Admission, AuthServiceOptions, BudgetName, CallPrice, GatehouseError, LimitName, LimitsByLevel, RateLimitedError, RateLimiter, RateLimiterOptions, RateLimits, Store, TokenUsage } from 'gatehouse'

declare const store: Store

describe('createRateLimiter', () => {
  test('takes a Store and optional level limits; gives admit → Admission', () => {
    expect(createRateLimiter({ store })).type.toBe<RateLimiter>()
    expect(createRateLimiter).type.toBeCallableWith({ store, byLevel: { member: { rpm: 60, tokensPerDay: null } }, overridesCacheMs: 4000, leaseSeconds: 60 })
    expect(createRateLimiter).type.not.toBeCallableWith({ byLevel: {} })
    expect<RateLimiterOptions['onLimited']>().type.toBe<((limit: LimitName) => void) | undefined>()
    expect<Awaited<ReturnType<RateLimiter['admit']>>>().type.toBe<Admission>()
    expect<Admission['headers']>().type.toBe<Record<string, string>>()
    expect<Parameters<Admission['settle']>[0]>().type.toBe<TokenUsage | undefined>()
    expect<LimitName>().type.toBe<'requests' | 'tokens' | 'tokens_per_day' | 'concurrent' | 'usd_per_day' | 'usd_per_month' | 'key_usd_per_month'>()
  })

  test('dollar budgets: admit takes the call\'s price, settle its cost; limits hold micro-dollars', () => {
    expect<Parameters<RateLimiter['admit']>[2]>().type.toBe<CallPrice | undefined>()
    expect<CallPrice['reservedMicros']>().type.toBe<number | undefined>()
    expect<Parameters<Admission['settle']>[1]>().type.toBe<number | undefined>()
    expect<RateLimits['usdPerDayMicros']>().type.toBe<number | null | undefined>()
    expect<BudgetName>().type.toBe<'usd_per_day' | 'usd_per_month' | 'key_usd_per_month'>()
  })

  test('RateLimitedError is a GatehouseError with the limit and headers', () => {
    expect<RateLimitedError>().type.toBeAssignableTo<GatehouseError>()
    expect<RateLimitedError['limit']>().type.toBe<LimitName>()
    expect<RateLimitedError['headers']>().type.toBe<Record<string, string>>()
  })

  test('limits: one type for GEMINI_LIMITS, the option and overrides', () => {
    expect<RateLimits['tokensPerDay']>().type.toBe<number | null | undefined>()
    expect<AuthServiceOptions['limits']>().type.toBe<LimitsByLevel | undefined>()
    expect(OPTION_RULES.parseLimits('{}')).type.toBe<LimitsByLevel>()
  })
})
