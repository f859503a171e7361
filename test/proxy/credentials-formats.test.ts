import t from 'tap'
import { DEFAULT_TOKEN_URI, parseCredentials, parseIsoExpiry, updateCredentials } from '../../lib/proxy/upstream/credentials-format.ts'

const EXPIRY_MS = Date.UTC(2030, 0, 2, 3, 4, 5)

t.test('every stored credentials format is read into the same fields', async t => {
  const cases: Array<{ name: string, raw: Record<string, unknown>, expect: Record<string, unknown> }> = [
    {
      name: "gemini-cli's oauth_creds.json (expiry_date in ms, scope string, no client)",
      raw: { access_token: 'at', refresh_token: 'rt', scope: 'a b  c', token_type: 'Bearer', id_token: 'x.y.z', expiry_date: EXPIRY_MS },
      expect: { format: 'gemini-cli', accessToken: 'at', expiryMs: EXPIRY_MS, refreshToken: 'rt', scopes: ['a', 'b', 'c'], clientId: undefined, clientSecret: undefined, tokenUri: DEFAULT_TOKEN_URI },
    },
    {
      name: "google-auth's authorized_user (token, ISO expiry with Z, scopes array, client, token_uri, project_id)",
      raw: { token: 'at', refresh_token: 'rt', token_uri: 'http://127.0.0.1:9/token', client_id: 'cid', client_secret: 'cs', scopes: ['a'], expiry: '2030-01-02T03:04:05Z', project_id: 'p1' },
      expect: { format: 'authorized-user', accessToken: 'at', expiryMs: EXPIRY_MS, scopes: ['a'], clientId: 'cid', clientSecret: 'cs', tokenUri: 'http://127.0.0.1:9/token', projectId: 'p1' },
    },
    {
      name: 'an ISO expiry with +00:00',
      raw: { token: 'at', refresh_token: 'rt', expiry: '2030-01-02T03:04:05+00:00' },
      expect: { expiryMs: EXPIRY_MS },
    },
    {
      name: 'an ISO expiry with no zone means UTC, microseconds allowed (Python)',
      raw: { token: 'at', refresh_token: 'rt', expiry: '2030-01-02T03:04:05.000123' },
      expect: { expiryMs: EXPIRY_MS },
    },
    {
      name: 'expiry_date wins over expiry when both are present',
      raw: { access_token: 'at', refresh_token: 'rt', expiry_date: EXPIRY_MS, expiry: '2001-01-01T00:00:00Z' },
      expect: { expiryMs: EXPIRY_MS },
    },
    {
      name: 'an unparseable expiry counts as missing (so the token is refreshed)',
      raw: { token: 'at', refresh_token: 'rt', expiry: 'soon' },
      expect: { expiryMs: undefined },
    },
    {
      name: 'access_token is used when token is absent, and the reverse',
      raw: { access_token: 'only-access', refresh_token: 'rt', client_id: 'c' },
      expect: { accessToken: 'only-access' },
    },
    {
      name: 'a gcloud ADC file (type authorized_user, no access token)',
      raw: { type: 'authorized_user', client_id: 'c', client_secret: 's', refresh_token: 'rt', quota_project_id: 'q' },
      expect: { format: 'authorized-user', accessToken: undefined, expiryMs: undefined, clientId: 'c', projectId: undefined },
    },
  ]
  for (const c of cases) {
    const parsed = parseCredentials(c.raw, 'test') as unknown as Record<string, unknown>
    for (const [key, value] of Object.entries(c.expect)) t.same(parsed[key], value, `${c.name}: ${key}`)
  }
})

t.test('credentials that cannot be refreshed are refused with a clear message', async t => {
  t.throws(() => parseCredentials({ access_token: 'at' }, 'GEMINI_CREDENTIALS'), /GEMINI_CREDENTIALS has no refresh_token/)
  t.throws(() => parseCredentials({ refresh_token: '  ' }, 'the file'), /the file has no refresh_token/)
  t.throws(() => parseCredentials(['x'], 'GEMINI_CREDENTIALS'), /must hold OAuth credentials as a JSON object/)
  t.throws(() => parseCredentials(null, 'GEMINI_CREDENTIALS'), /JSON object/)
})

t.test('an update is written in the keys the stored format already uses', async t => {
  const update = { accessToken: 'new', expiryMs: EXPIRY_MS, projectId: 'proj' }
  const geminiCli = updateCredentials({ access_token: 'old', refresh_token: 'rt', scope: 's', expiry_date: 1, id_token: 'i' }, update)
  t.same(geminiCli, { access_token: 'new', refresh_token: 'rt', scope: 's', expiry_date: EXPIRY_MS, id_token: 'i', project_id: 'proj' }, 'gemini-cli keeps access_token/expiry_date, gains no client or ISO expiry')

  const authorized = updateCredentials({ token: 'old', refresh_token: 'rt', client_id: 'c', client_secret: 's', expiry: 'x', scopes: ['a'] }, update)
  t.same(authorized, { token: 'new', refresh_token: 'rt', client_id: 'c', client_secret: 's', expiry: '2030-01-02T03:04:05.000Z', scopes: ['a'], project_id: 'proj' }, 'authorized_user keeps token/ISO expiry and its own client')

  const adc = updateCredentials({ type: 'authorized_user', client_id: 'c', client_secret: 's', refresh_token: 'rt' }, { accessToken: 'new', expiryMs: EXPIRY_MS })
  t.same(adc, { type: 'authorized_user', client_id: 'c', client_secret: 's', refresh_token: 'rt', token: 'new', expiry: '2030-01-02T03:04:05.000Z' }, 'a file without a token gets its format\'s keys')

  const both = updateCredentials({ token: 'old', access_token: 'old', refresh_token: 'rt', expiry: 'x', expiry_date: 1 }, { accessToken: 'new', expiryMs: EXPIRY_MS })
  t.equal(both.token, 'new')
  t.equal(both.access_token, 'new')
  t.equal(both.expiry_date, EXPIRY_MS)
  t.equal(both.expiry, '2030-01-02T03:04:05.000Z', 'a file holding both spellings keeps both in step')
  t.equal(parseIsoExpiry(''), undefined)
})
