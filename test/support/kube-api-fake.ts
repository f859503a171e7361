// A test double of the Kubernetes API server: just enough for `helm template --dry-run=server` to render a
// chart whose `lookup` finds objects (the release's Secret on an upgrade). Discovery for the kinds the chart's
// default render makes, GET of the objects it was given, 404 for everything else. Never used outside tests.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

export interface KubeObject {
  apiVersion: string
  kind: string
  metadata: { name: string, namespace: string, labels?: Record<string, string>, annotations?: Record<string, string> }
  [field: string]: unknown
}

export interface KubeApiFake {
  /** A kubeconfig file pointing at the fake, for helm's --kubeconfig. */
  kubeconfig: string
  /** Every request path seen, in order. */
  requests: string[]
  close (): Promise<void>
}

const CORE = { Secret: 'secrets', ConfigMap: 'configmaps', Service: 'services', ServiceAccount: 'serviceaccounts', Pod: 'pods', PersistentVolumeClaim: 'persistentvolumeclaims' }
const APPS = { Deployment: 'deployments' }

function resources (kinds: Record<string, string>): unknown[] {
  return Object.entries(kinds).map(([kind, name]) => ({ name, singularName: kind.toLowerCase(), namespaced: true, kind, verbs: ['get', 'list'] }))
}

/** Objects as Helm would find them in the cluster, owned by `release` (Helm refuses to adopt others). */
export function ownedBy (release: string, namespace: string, object: { apiVersion: string, kind: string, metadata: { name: string }, [field: string]: unknown }): KubeObject {
  return {
    ...object,
    metadata: {
      ...object.metadata,
      namespace,
      labels: { 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: { 'meta.helm.sh/release-name': release, 'meta.helm.sh/release-namespace': namespace },
    },
  }
}

export async function startKubeApiFake (objects: KubeObject[]): Promise<KubeApiFake> {
  const requests: string[] = []
  const byPath = new Map<string, KubeObject>()
  for (const o of objects) {
    const plural = (CORE as Record<string, string>)[o.kind] ?? (APPS as Record<string, string>)[o.kind]
    const prefix = o.apiVersion === 'v1' ? '/api/v1' : `/apis/${o.apiVersion}`
    byPath.set(`${prefix}/namespaces/${o.metadata.namespace}/${plural}/${o.metadata.name}`, o)
  }
  const server = http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0]
    requests.push(url)
    const send = (status: number, body: unknown): void => { res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)) }
    if (req.method !== 'GET') return send(405, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 405 })
    if (url === '/version') return send(200, { major: '1', minor: '33', gitVersion: 'v1.33.0' })
    if (url === '/api') return send(200, { kind: 'APIVersions', versions: ['v1'] })
    if (url === '/apis') return send(200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [{ name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } }] })
    if (url === '/api/v1') return send(200, { kind: 'APIResourceList', groupVersion: 'v1', resources: resources(CORE) })
    if (url === '/apis/apps/v1') return send(200, { kind: 'APIResourceList', groupVersion: 'apps/v1', resources: resources(APPS) })
    const found = byPath.get(url)
    if (found !== undefined) return send(200, found)
    send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-kube-'))
  const kubeconfig = path.join(dir, 'kubeconfig')
  writeFileSync(kubeconfig, JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fake', cluster: { server: `http://127.0.0.1:${port}` } }],
    users: [{ name: 'fake', user: { token: 'fake' } }],
    contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake' } }],
    'current-context': 'fake',
  }), { mode: 0o600 })
  return {
    kubeconfig,
    requests,
    close: () => new Promise(resolve => {
      rmSync(dir, { recursive: true, force: true })
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
