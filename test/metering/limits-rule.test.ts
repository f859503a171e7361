// GEMINI_LIMITS, the option `limits` and the admin override body: one rule, three forms.
import t from 'tap'
import { DEFAULT_CONCURRENT, allowedResources, allowedTools, effectiveLimits, limitsToWire, parseLimitsBody, parseLimitsJson, resolveLimitsOption } from '../../lib/metering/limits-rule.ts'
import { BUILT_IN_TOOLS, ConfigurationError } from '../../lib/index.ts'

t.test('GEMINI_LIMITS: access levels to snake_case limits, null or absent for unlimited', async t => {
  t.same(parseLimitsJson('{"member": {"rpm": 60, "tpm": 100000, "tokens_per_day": null, "concurrent": 4}, "hush": {}}'),
    { member: { rpm: 60, tpm: 100000, tokensPerDay: null, concurrent: 4 }, hush: {} })
  t.same(parseLimitsJson('{}'), {})
  t.ok(Object.isFrozen(parseLimitsJson('{"dev": {"rpm": 1}}').dev))
})

t.test('GEMINI_LIMITS: a bad value is refused with a ConfigurationError naming the field', async t => {
  const refused: Array<[string, RegExp]> = [
    ['not json', /not valid JSON/],
    ['[]', /limits must be an object from access level/],
    ['{"owner": {}}', /"owner" is not an access level/],
    ['{"member": 5}', /limits\.member must be an object/],
    ['{"member": {"rpm": -1}}', /limits\.member\.rpm must be a whole number/],
    ['{"member": {"tpm": 1.5}}', /limits\.member\.tpm/],
    ['{"member": {"tokens_per_day": "9"}}', /limits\.member\.tokens_per_day/],
    ['{"member": {"concurrent": 1e300}}', /limits\.member\.concurrent/],
    ['{"member": {"tokensPerDay": 5}}', /"limits\.member\.tokensPerDay" is not a limit \(use rpm, tpm, tokens_per_day, concurrent, usd_per_day, usd_per_month\)/],
  ]
  for (const [text, message] of refused) t.throws(() => parseLimitsJson(text), { constructor: ConfigurationError, option: 'limits', message }, text)
})

t.test('allow: the upstream resource kinds a level may use; files and caches by default, batches only where allowed', async t => {
  const table = parseLimitsJson('{"member": {"rpm": 60, "allow": ["files"]}, "dev": {"allow": ["batches", "caches", "files", "files"]}, "admin": {"allow": []}}')
  t.same(table, { member: { rpm: 60, allow: ['files'] }, dev: { allow: ['batches', 'caches', 'files'] }, admin: { allow: [] } })
  t.same(allowedResources(table, 'member'), ['files'])
  t.same(allowedResources(table, 'admin'), [], 'an empty list allows nothing')
  t.same(allowedResources(table, 'default'), ['files', 'caches'], 'a level left out, none below it listed: files and caches')
  t.same(allowedResources(parseLimitsJson('{"member": {"allow": ["files"]}}'), 'dev'), ['files'], 'a level left out: the nearest lower level\'s allow')
  t.same(allowedResources(parseLimitsJson('{"hush": {"rpm": 1}}'), 'hush'), ['files', 'caches'], 'a level without allow: the same')
  t.same(resolveLimitsOption({ dev: { allow: ['batches'] } }), { dev: { allow: ['batches'] } }, 'the option takes it too')
  t.same(effectiveLimits(table.member, null), { rpm: 60, concurrent: DEFAULT_CONCURRENT }, 'allow is no rate limit')
  for (const [text, message] of [
    ['{"member": {"allow": "files"}}', /limits\.member\.allow must be a list of batches, caches, files/],
    ['{"member": {"allow": ["uploads"]}}', /limits\.member\.allow must be a list/],
  ] as Array<[string, RegExp]>) t.throws(() => parseLimitsJson(text), { constructor: ConfigurationError, option: 'limits', message }, text)
  t.throws(() => parseLimitsBody({ allow: ['batches'] }), { code: 'INVALID_INPUT' }, 'an admin override cannot widen what a level may use')
})

t.test('tools: the built-in tools a level may send; every one by default, a listed tools restricts', async t => {
  const table = parseLimitsJson('{"member": {"rpm": 60, "tools": ["urlContext", "googleSearch", "urlContext"]}, "admin": {"tools": []}, "hush": {"allow": ["files"]}}')
  t.same(table, { member: { rpm: 60, tools: ['urlContext', 'googleSearch'] }, admin: { tools: [] }, hush: { allow: ['files'] } })
  t.same(allowedTools(table, 'member'), ['urlContext', 'googleSearch'])
  t.same(allowedTools(table, 'admin'), [], 'an empty list allows no built-in tool')
  t.same(allowedTools(table, 'dev'), [], 'a level left out: the nearest lower level\'s tools (admin\'s)')
  t.same(allowedTools(parseLimitsJson('{"member": {"tools": ["urlContext"]}}'), 'admin'), ['urlContext'], 'so a promotion never widens them by accident')
  t.same(allowedTools(table, 'default'), BUILT_IN_TOOLS, 'no level at or below listed: every built-in tool')
  t.same(allowedTools(table, 'hush'), ['googleSearch', 'urlContext', 'googleMaps', 'codeExecution', 'fileSearch'], 'a listed level without tools: all five')
  t.same(resolveLimitsOption({ dev: { tools: ['codeExecution'], allow: ['batches'] } }), { dev: { allow: ['batches'], tools: ['codeExecution'] } }, 'the option takes it too')
  t.same(effectiveLimits(table.member, null), { rpm: 60, concurrent: DEFAULT_CONCURRENT }, 'tools is no rate limit')
  for (const [text, message] of [
    ['{"member": {"tools": "googleSearch"}}', /^limits: limits\.member\.tools must be a list of googleSearch, urlContext, googleMaps, codeExecution, fileSearch \(got .*googleSearch.*\)$/],
    ['{"member": {"tools": ["google_search"]}}', /limits\.member\.tools must be a list/],
    ['{"dev": {"tools": ["computerUse"]}}', /limits\.dev\.tools must be a list .*\(got .*computerUse.*\)/],
  ] as Array<[string, RegExp]>) t.throws(() => parseLimitsJson(text), { constructor: ConfigurationError, option: 'limits', message }, text)
  t.throws(() => resolveLimitsOption({ member: { tools: [null] } }, 'resources.byLevel'), { option: 'resources.byLevel', message: /resources\.byLevel\.member\.tools must be a list/ }, 'the option names itself')
  t.throws(() => parseLimitsBody({ tools: ['googleSearch'] }), { code: 'INVALID_INPUT' }, 'an admin override cannot widen the tools a level may send')
})

t.test('the option limits takes camelCase fields and names the option at fault', async t => {
  t.same(resolveLimitsOption({ admin: { tokensPerDay: 5, rpm: null } }), { admin: { tokensPerDay: 5, rpm: null } })
  t.same(resolveLimitsOption(undefined), {})
  t.throws(() => resolveLimitsOption({ admin: { tokens_per_day: 5 } }), { name: 'TypeError', option: 'limits', message: /limits\.admin\.tokens_per_day" is not a limit/ })
  t.throws(() => resolveLimitsOption('{}', 'byLevel'), { name: 'TypeError', option: 'byLevel' })
})

t.test('the override body: 400 INVALID_INPUT with the field as param', async t => {
  t.same(parseLimitsBody({ rpm: 5, tokens_per_day: null }), { rpm: 5, tokensPerDay: null })
  t.same(parseLimitsBody({}), {})
  const refused: Array<[unknown, string | null, RegExp]> = [
    [null, null, /^The body must be an object/],
    [[1], null, /^The body must be an object/],
    ['rpm', null, /^The body must be an object/],
    [{ rpm: '5' }, 'rpm', /^rpm must be a whole number/],
    [{ concurrent: -1 }, 'concurrent', /concurrent must be/],
    [{ tpm: { $gt: 0 } }, 'tpm', /tpm must be/],
    [{ rpm: 1, user_id: 'x' }, 'user_id', /"user_id" is not a limit/],
    [{ ['x'.repeat(5000)]: 1 }, 'x'.repeat(5000), /^"x{40}…" is not a limit/],
  ]
  for (const [body, param, message] of refused) t.throws(() => parseLimitsBody(body), { code: 'INVALID_INPUT', status: 400, param, message }, JSON.stringify(body).slice(0, 40))
  t.throws(() => parseLimitsBody(JSON.parse('{"__proto__": {"rpm": 1}}')), { code: 'INVALID_INPUT' })
})

t.test('a default concurrent per level: a listed level that sets no concurrent allows DEFAULT_CONCURRENT calls at once; null or an override lifts it', async t => {
  t.equal(DEFAULT_CONCURRENT, 8)
  t.same(effectiveLimits({ tokensPerDay: 3000 }, null), { tokensPerDay: 3000, concurrent: 8 })
  t.same(effectiveLimits({ concurrent: null }, null), { concurrent: null }, 'null: unlimited, as written')
  t.same(effectiveLimits({ tpm: 5 }, { concurrent: 20 }), { tpm: 5, concurrent: 20 }, 'a user\'s override replaces it')
  t.same(effectiveLimits(undefined, null), {}, 'a level the table does not list stays unlimited')
})

t.test('effective limits: the override replaces level values field by field', async t => {
  t.same(effectiveLimits({ rpm: 1, tpm: 2 }, { tpm: null, concurrent: 3 }), { rpm: 1, tpm: null, concurrent: 3 })
  t.same(effectiveLimits(undefined, null), {})
  t.same(limitsToWire({ tokensPerDay: null, rpm: 4 }), { rpm: 4, tokens_per_day: null })
})

t.test('usd_per_day and usd_per_month are written in dollars and held in micro-dollars; a bad one is refused naming the field', async t => {
  t.same(parseLimitsJson('{"member": {"usd_per_day": 5, "usd_per_month": "120.50"}, "dev": {"usd_per_day": 0.000001, "usd_per_month": null}}'),
    { member: { usdPerDayMicros: 5_000_000, usdPerMonthMicros: 120_500_000 }, dev: { usdPerDayMicros: 1, usdPerMonthMicros: null } })
  for (const [text, message] of [
    ['{"member": {"usd_per_day": -1}}', /limits\.member\.usd_per_day must be US dollars, 0 or more/],
    ['{"member": {"usd_per_month": "1.0000001"}}', /limits\.member\.usd_per_month must be US dollars.*at most 6 decimals/],
    ['{"member": {"usd_per_day": "five"}}', /limits\.member\.usd_per_day/],
    ['{"member": {"usd_per_day": true}}', /limits\.member\.usd_per_day/],
  ] as Array<[string, RegExp]>) t.throws(() => parseLimitsJson(text), { constructor: ConfigurationError, option: 'limits', message }, text)
  t.same(resolveLimitsOption({ member: { usdPerDayMicros: 2_500_000 } }), { member: { usdPerDayMicros: 2_500_000 } }, 'the option takes micro-dollars')
  t.throws(() => resolveLimitsOption({ member: { usdPerDayMicros: 2.5 } }), { option: 'limits', message: /limits\.member\.usdPerDayMicros must be a whole number of micro-dollars/ })
  t.same(parseLimitsBody({ usd_per_day: '2.50', usd_per_month: null }), { usdPerDayMicros: 2_500_000, usdPerMonthMicros: null }, 'the override body takes dollars')
  t.throws(() => parseLimitsBody({ usd_per_month: '1e3' }), { code: 'INVALID_INPUT', param: 'usd_per_month', message: /^usd_per_month must be US dollars/ })
  t.same(limitsToWire({ usdPerDayMicros: 2_500_000, usdPerMonthMicros: null, rpm: 3 }), { rpm: 3, usd_per_day: 2.5, usd_per_month: null }, 'answers show dollars')
  t.same(effectiveLimits({ usdPerDayMicros: 1, rpm: 2 }, { usdPerDayMicros: null }), { usdPerDayMicros: null, rpm: 2, concurrent: 8 }, 'an override lifts a budget as it does a limit (a listed level\'s default concurrent stays)')
})
