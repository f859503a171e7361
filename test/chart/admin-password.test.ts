// The admin password in the chart: generated into the chart-made Secret, kept across upgrades through `lookup`
// (against a fake Kubernetes API server, as `helm upgrade` would see the cluster), an explicit value winning,
// and how NOTES.txt says to read it.
import t from 'tap'
import { createHash } from 'node:crypto'
import { CHART, FULLNAME, NAMESPACE, RELEASE, helmWithValues, only, podSpecOf, render, template } from './render.ts'
import type { K8sObject } from './render.ts'
import { ownedBy, startKubeApiFake } from '../support/kube-api-fake.ts'
import type { KubeObject } from '../support/kube-api-fake.ts'

const decoded = (secret: K8sObject, key: string): string => Buffer.from(secret.data[key], 'base64').toString('utf8')
const gatewayEnv = (objects: K8sObject[], name: string): any =>
  podSpecOf(only(objects, 'Deployment')).containers.find((c: any) => c.name === 'gateway').env.find((e: any) => e.name === name)

function releaseSecret (adminPassword: string): KubeObject {
  return ownedBy(RELEASE, NAMESPACE, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: FULLNAME },
    type: 'Opaque',
    data: { 'admin-password': Buffer.from(adminPassword).toString('base64') },
  })
}

t.test('the chart generates a random admin password into its Secret and passes it as AUTH_ADMIN_PASSWORD', async t => {
  const [one, two] = await Promise.all([render(), render()])
  const password = decoded(only(one, 'Secret'), 'admin-password')
  t.match(password, /^[A-Za-z0-9]{32}$/, '32 random letters and digits')
  t.not(decoded(only(two, 'Secret'), 'admin-password'), password, 'a fresh one for a fresh install')
  t.same(Object.keys(only(one, 'Secret').data), ['admin-password'], 'nothing else without values')
  t.same(gatewayEnv(one, 'AUTH_ADMIN_PASSWORD').valueFrom.secretKeyRef, { name: FULLNAME, key: 'admin-password', optional: true })

  // The Deployment renders the Secret template again for its checksum: it must see the same generated password.
  const { stdout } = await template()
  const manifest = /# Source: gatehouse\/templates\/secret\.yaml\n([\s\S]*?)\n---/.exec(stdout)?.[1] ?? ''
  const checksum = /checksum\/secret: (\w+)/.exec(stdout)?.[1]
  const sha = (text: string): string => createHash('sha256').update(text).digest('hex')
  t.ok([manifest, `${manifest}\n`, `\n${manifest}`, `\n${manifest}\n`].some(text => sha(text) === checksum), 'checksum/secret is of the Secret shipped in the same render')
})

t.test('an upgrade keeps the generated admin password: the chart reads it back from the release\'s Secret (helm lookup)', async t => {
  const cluster = await startKubeApiFake([releaseSecret('kept-from-install-0123456789abcd')])
  t.teardown(() => cluster.close())
  const server = ['--dry-run=server', '--disable-openapi-validation', '--kubeconfig', cluster.kubeconfig]
  const upgraded = await render({ config: { logLevel: 'debug' } }, server)
  t.equal(decoded(only(upgraded, 'Secret'), 'admin-password'), 'kept-from-install-0123456789abcd')
  t.ok(cluster.requests.includes(`/api/v1/namespaces/${NAMESPACE}/secrets/${FULLNAME}`), 'it was read from the cluster')
  const again = await render({ config: { logLevel: 'debug' } }, server)
  t.equal(only(again, 'Deployment').spec.template.metadata.annotations['checksum/secret'], only(upgraded, 'Deployment').spec.template.metadata.annotations['checksum/secret'],
    'the secret checksum is stable, so an upgrade that changes nothing else does not roll the pods')

  const chosen = await render({ secrets: { adminPassword: 'operator-chosen-password' } }, server)
  t.equal(decoded(only(chosen, 'Secret'), 'admin-password'), 'operator-chosen-password', 'an explicit secrets.adminPassword wins')
})

t.test('with existingSecret the chart generates no password; without its key the gateway generates one into AUTH_ADMIN_PASSWORD_FILE', async t => {
  const objects = await render({ existingSecret: { name: 'mine', keys: { proxyPassword: 'pw' } }, config: { adminPasswordFile: '/tmp/gatehouse/admin-password' } })
  t.equal(objects.filter(o => o.kind === 'Secret').length, 0)
  t.notOk(gatewayEnv(objects, 'AUTH_ADMIN_PASSWORD'), 'no AUTH_ADMIN_PASSWORD')
  t.equal(only(objects, 'ConfigMap').data.AUTH_ADMIN_PASSWORD_FILE, '/tmp/gatehouse/admin-password')
  t.notOk(only(await render(), 'ConfigMap').data.AUTH_ADMIN_PASSWORD_FILE, 'unset by default: the gateway picks the place')
})

t.test('NOTES.txt says how to read the admin password, never printing it', async t => {
  const notes = async (values: object): Promise<string> => {
    const result = await helmWithValues(['install', RELEASE, CHART, '--namespace', NAMESPACE, '--dry-run=client'], values)
    t.equal(result.code, 0, result.stderr)
    return result.stdout.slice(result.stdout.indexOf('NOTES:'))
  }
  const generated = await notes({})
  t.match(generated, `kubectl --namespace ${NAMESPACE} get secret ${FULLNAME} -o jsonpath='{.data.admin-password}' | base64 -d`)
  t.match(generated, /kept across upgrades/)
  const given = await notes({ secrets: { adminPassword: 'operator-chosen-password' } })
  t.notMatch(given, /operator-chosen-password/)
  t.match(await notes({ existingSecret: { name: 'mine', keys: { adminPassword: 'admin' } } }), "get secret mine -o jsonpath='{.data.admin}' | base64 -d")
  const byGateway = await notes({ existingSecret: { name: 'mine', keys: { proxyPassword: 'pw' } } })
  t.match(byGateway, `logs deployment/${FULLNAME} | grep 'generated password'`)
  t.match(byGateway, /never to the log/)
})
