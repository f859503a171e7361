import t from 'tap'
import { runHelm } from '../../scripts/helm.ts'
import { CHART, NAMESPACE, helmWithValues } from './render.ts'
import { VALUE_SETS } from './value-sets.ts'

t.test('helm lint passes', async t => {
  const result = await runHelm(['lint', CHART])
  t.equal(result.code, 0, result.stdout + result.stderr)
  t.match(result.stdout, '1 chart(s) linted, 0 chart(s) failed')
})

t.test('helm lint --strict passes for every value set', async t => {
  await Promise.all(VALUE_SETS.map(async set => {
    const result = await helmWithValues(['lint', '--strict', CHART], set.values)
    t.equal(result.code, 0, `${set.name}: ${result.stdout}${result.stderr}`)
    t.notMatch(result.stdout, /\[(WARNING|ERROR)\]/, `${set.name}: no warnings`)
  }))
})

// helm lint deliberately does not stop at `fail` (refusals are tested with helm template), but it does
// apply values.schema.json.
t.test('helm lint fails on values the schema rejects', async t => {
  const result = await helmWithValues(['lint', '--strict', CHART], { replicas: 2 })
  t.not(result.code, 0)
  t.match(result.stdout, "additional properties 'replicas' not allowed")
})

// NOTES.txt is not part of `helm template`; a client-side dry-run install renders it without a cluster.
async function notes (values: object): Promise<string> {
  const result = await helmWithValues(['install', 'gh', CHART, '--dry-run=client', '--namespace', NAMESPACE], values)
  if (result.code !== 0) throw new Error(result.stderr)
  const at = result.stdout.indexOf('NOTES:')
  return at < 0 ? '' : result.stdout.slice(at)
}

t.test('install notes tell how to reach the gateway and warn about what is missing', async t => {
  const defaults = await notes({})
  t.match(defaults, `kubectl --namespace ${NAMESPACE} port-forward service/gh-gatehouse 8888:8888`)
  t.match(defaults, 'helm test gh')
  t.match(defaults, 'no proxy password is set')
  t.match(defaults, 'in memory only')
  t.match(defaults, `get secret gh-gatehouse -o jsonpath='{.data.admin-password}' | base64 -d`)

  const configured = await notes({
    secrets: { proxyPassword: 'a-long-proxy-password', adminPassword: 'long-enough', mongodbUrl: 'mongodb://m:27017' },
    metrics: { port: 9464 },
  })
  t.notMatch(configured, 'no proxy password')
  t.notMatch(configured, 'random password')
  t.match(configured, 'Store: MongoDB')
  t.match(configured, '/metrics on port 9464 only')

  t.match(await notes({ persistence: { enabled: true } }), 'saved to /app/data/auth-db.json on claim gh-gatehouse-data')
})
