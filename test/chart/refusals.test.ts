import t from 'tap'
import { only, render, template } from './render.ts'

const EMBEDDED_WHY = 'The embedded store keeps users and sessions inside each pod'

t.test('more than one replica without MongoDB is refused, saying why', async t => {
  const result = await template({ replicaCount: 3 })
  t.not(result.code, 0)
  t.match(result.stderr, 'replicaCount=3 needs MongoDB')
  t.match(result.stderr, EMBEDDED_WHY)
  t.match(result.stderr, 'secrets.mongodbUrl')
  t.equal(result.stdout, '', 'nothing is rendered')
})

t.test('autoscaling without MongoDB is refused, saying why', async t => {
  const result = await template({ autoscaling: { enabled: true } })
  t.not(result.code, 0)
  t.match(result.stderr, 'autoscaling needs MongoDB')
  t.match(result.stderr, EMBEDDED_WHY)
})

t.test('an existingSecret that declares no MongoDB key does not count as MongoDB', async t => {
  const result = await template({ replicaCount: 2, existingSecret: { name: 'mine', keys: { proxyPassword: 'pw' } } })
  t.not(result.code, 0)
  t.match(result.stderr, 'replicaCount=2 needs MongoDB')
})

t.test('an existingSecret with a declared MongoDB key allows several replicas, with a required reference', async t => {
  const objects = await render({ replicaCount: 2, existingSecret: { name: 'mine', keys: { mongodbUrl: 'url' } } })
  const env = only(objects, 'Deployment').spec.template.spec.containers[0].env
  t.same(env, [{ name: 'MONGODB_URL', valueFrom: { secretKeyRef: { name: 'mine', key: 'url', optional: false } } }])
  t.equal(only(objects, 'Deployment').spec.replicas, 2)
})

t.test('a MongoDB URL in the values allows several replicas', async t => {
  const objects = await render({ replicaCount: 2, secrets: { mongodbUrl: 'mongodb+srv://cluster.example.com/db' } })
  t.equal(only(objects, 'Deployment').spec.replicas, 2)
})

t.test('value combinations that would deploy something broken are refused with a reason', async t => {
  const cases: Array<[string, object, string]> = [
    ['persistence with MongoDB', { persistence: { enabled: true }, secrets: { mongodbUrl: 'mongodb://m:27017' } }, 'embedded store is not used'],
    ['secret values next to existingSecret', { existingSecret: { name: 'mine', keys: { apiKey: 'k' } }, secrets: { apiKey: 'x' } }, 'secrets.apiKey is set together with existingSecret.name'],
    ['existingSecret naming no key', { existingSecret: { name: 'mine' } }, 'existingSecret.keys names no key'],
    ['credentials that are not JSON', { secrets: { credentials: 'not json' } }, 'secrets.credentials must be the OAuth credentials as a JSON object'],
    ['metrics on the gateway port', { metrics: { port: 8888 } }, 'metrics.port must differ from the gateway port'],
    ['autoscaling min above max', { secrets: { mongodbUrl: 'mongodb://m' }, autoscaling: { enabled: true, minReplicas: 5, maxReplicas: 2 } }, 'minReplicas is larger'],
    ['PDB with both bounds', { podDisruptionBudget: { enabled: true, minAvailable: 1, maxUnavailable: 1 } }, 'exactly one of minAvailable and maxUnavailable'],
    ['PDB with neither bound', { podDisruptionBudget: { enabled: true, minAvailable: '', maxUnavailable: '' } }, 'exactly one of minAvailable and maxUnavailable'],
  ]
  await Promise.all(cases.map(async ([name, values, message]) => {
    const result = await template(values)
    t.not(result.code, 0, `${name}: refused`)
    t.match(result.stderr, message, `${name}: says why`)
  }))
})

t.test('values.schema.json rejects unknown keys, wrong types and values the gateway would refuse', async t => {
  const cases: Array<[string, object, RegExp]> = [
    ['unknown top-level key', { replicas: 2 }, /additional properties 'replicas' not allowed/],
    ['unknown nested key', { service: { prot: 80 } }, /additional properties 'prot' not allowed/],
    ['wrong type', { replicaCount: 'three' }, /replicaCount/],
    ['short admin password', { secrets: { adminPassword: 'short' } }, /adminPassword/],
    ['proxy password shorter than 16 characters', { secrets: { proxyPassword: 'fifteen-chars!!' } }, /proxyPassword/],
    ['image ports that are not a list of ports', { config: { imageFetchAllowedPorts: 'http, https' } }, /imageFetchAllowedPorts/],
    ['not a MongoDB URL', { secrets: { mongodbUrl: 'http://db' } }, /mongodbUrl/],
    ['unknown log level', { config: { logLevel: 'loud' } }, /logLevel/],
    ['unknown backend', { config: { backend: 'openai' } }, /backend/],
    ['unknown access level', { config: { proxyMinAccessLevel: 'root' } }, /proxyMinAccessLevel/],
    ['root user', { securityContext: { runAsUser: 0 } }, /runAsUser/],
    ['negative shutdown timeout', { shutdown: { timeoutSeconds: -1 } }, /timeoutSeconds/],
    ['credentials neither env nor file', { credentials: { mountAs: 'volume' } }, /mountAs/],
    ['a Vertex location that is no region name', { config: { vertexLocation: 'evil.example/x' } }, /vertexLocation/],
    ['a Vertex location pool with an entry that is no region name', { config: { vertexLocation: 'us-central1,evil.example/x' } }, /vertexLocation/],
    ['a credentials directory mounted at a relative path', { credentialsDir: { secretName: 'pool', mountPath: 'creds' } }, /mountPath/],
    ['a Vertex endpoint that is no URL', { config: { vertexEndpoint: 'aiplatform.googleapis.com' } }, /vertexEndpoint/],
  ]
  await Promise.all(cases.map(async ([name, values, message]) => {
    const result = await template(values)
    t.not(result.code, 0, `${name}: refused`)
    t.match(result.stderr, /values don't meet the specifications of the schema/, `${name}: by the schema`)
    t.match(result.stderr, message, `${name}: names the value`)
  }))
})


t.test('config.limits outside GEMINI_LIMITS\' rule is refused by the schema (unknown level or field, negative or fractional numbers, an unknown resource kind or built-in tool, a dollar budget that is no amount)', async t => {
  for (const limits of [{ owner: { rpm: 1 } }, { member: { tokensPerDay: 1 } }, { member: { rpm: -1 } }, { member: { tpm: 1.5 } }, { member: 5 }, { member: { allow: ['everything'] } }, { member: { allow: 'files' } }, { member: { tools: ['google_search'] } }, { member: { tools: 'googleSearch' } }, { member: { usd_per_day: -1 } }, { member: { usd_per_month: '1e3' } }, { member: { usd_per_day: '0.1234567' } }]) {
    const result = await template({ config: { limits } })
    t.not(result.code, 0, JSON.stringify(limits))
    t.equal(result.stdout, '', 'nothing is rendered')
  }
})

t.test('a service-account key file together with a Code Assist credentials file is refused: both would set GOOGLE_APPLICATION_CREDENTIALS', async t => {
  const result = await template({ serviceAccountKey: { secretName: 'vertex-key' }, credentials: { mountAs: 'file' }, secrets: { credentials: '{"refresh_token":"x"}' } })
  t.not(result.code, 0)
  t.match(result.stderr, 'serviceAccountKey.secretName and credentials.mountAs=file both set GOOGLE_APPLICATION_CREDENTIALS')
  t.equal(result.stdout, '', 'nothing is rendered')
})

t.test('a credentials directory together with the single OAuth credentials is refused: the directory would win', async t => {
  for (const values of [
    { credentialsDir: { secretName: 'pool' }, secrets: { credentials: '{"refresh_token":"x"}' } },
    { credentialsDir: { secretName: 'pool' }, existingSecret: { name: 'mine', keys: { credentials: 'oauth' } } },
  ]) {
    const result = await template(values)
    t.not(result.code, 0)
    t.match(result.stderr, 'credentialsDir.secretName and the OAuth credentials (secrets.credentials or existingSecret.keys.credentials) are both set')
    t.equal(result.stdout, '', 'nothing is rendered')
  }
  const clash = await template({ credentialsDir: { secretName: 'pool', mountPath: '/etc/gatehouse/service-account/' } })
  t.not(clash.code, 0)
  t.match(clash.stderr, 'credentialsDir.mountPath must differ from credentials.mountPath and serviceAccountKey.mountPath')
})
