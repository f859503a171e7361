import t from 'tap'
import {
  FULLNAME, NAMESPACE, RELEASE, chartMeta, only, podSpecOf, render, selects, serviceMonitorProblems, validateWithKubernetesModels,
} from './render.ts'
import type { K8sObject } from './render.ts'
import { CREDENTIALS_JSON, VALUE_SETS } from './value-sets.ts'
import { loadConfig } from '../../gateway/config.ts'

// Variables the gateway reads (the README's configuration table, docs/configuration.md); the chart must not invent others.
const CONTRACT_ENV = new Set([
  'HOST', 'PORT', 'MONGODB_URL', 'MONGODB_DB', 'AUTH_DATA_FILE', 'DEBUG', 'AUTH_ADMIN_USERNAME', 'AUTH_ADMIN_PASSWORD', 'AUTH_ADMIN_PASSWORD_FILE',
  'AUTH_SESSION_TTL_SECONDS', 'AUTH_REAUTH_SECONDS', 'AUTH_QUERY_TOKENS', 'GEMINI_AUTH_PASSWORD', 'GEMINI_CREDENTIALS', 'GOOGLE_APPLICATION_CREDENTIALS', 'GOOGLE_CLOUD_PROJECT',
  'GEMINI_OAUTH_CLIENT_ID', 'GEMINI_OAUTH_CLIENT_SECRET', 'CODE_ASSIST_ENDPOINT', 'GEMINI_API_KEY', 'GEMINI_API_ENDPOINT',
  'GEMINI_BACKEND', 'GEMINI_MODELS', 'METRICS_PORT', 'LOG_LEVEL', 'SHUTDOWN_TIMEOUT_SECONDS', 'OTEL_SERVICE_NAME', 'OTEL_EXPORTER_OTLP_ENDPOINT',
  'TRUSTED_PROXIES', 'AUTH_PUBLIC_SIGNUP', 'AUTH_SIGNUPS_PER_ADDRESS', 'AUTH_SIGNUP_WINDOW_SECONDS',
  'IMAGE_FETCH_ALLOWED_PORTS', 'GEMINI_MODEL_ACCESS', 'PROXY_MIN_ACCESS_LEVEL', 'PROXY_KEY_DEFAULT_DAYS', 'GEMINI_LIMITS', 'GEMINI_MAX_CACHE_TTL_SECONDS', 'GEMINI_MODEL_DISCOVERY_HOURS',
  'GOOGLE_CLOUD_LOCATION', 'VERTEX_ENDPOINT', 'GEMINI_CREDENTIALS_DIR', 'GEMINI_CREDENTIALS_WRITE_BACK',
  'CONSOLE_ENABLED', 'CONSOLE_PATH', 'CONSOLE_ALLOW_HTTP',
])

const rendered = new Map<string, Promise<K8sObject[]>>()
function renderSet (name: string): Promise<K8sObject[]> {
  const set = VALUE_SETS.find(s => s.name === name)
  if (!set) throw new Error(`no value set ${name}`)
  if (!rendered.has(name)) rendered.set(name, render(set.values))
  return rendered.get(name)!
}
const valuesOf = (name: string) => VALUE_SETS.find(s => s.name === name)!.values

function gateway (objects: K8sObject[]): any {
  return podSpecOf(only(objects, 'Deployment')).containers.find((c: any) => c.name === 'gateway')
}
function configData (objects: K8sObject[]): Record<string, string> {
  return only(objects, 'ConfigMap').data
}
function envNamed (objects: K8sObject[], name: string): any {
  return (gateway(objects).env ?? []).find((e: any) => e.name === name)
}

t.test('every rendered object is valid against the Kubernetes schemas, for every value set', async t => {
  for (const set of VALUE_SETS) {
    const objects = await renderSet(set.name)
    t.ok(objects.length >= 5, `${set.name}: renders objects`)
    for (const object of objects) {
      const label = `${set.name}: ${object.kind} ${object.metadata.name}`
      if (object.kind === 'ServiceMonitor') {
        t.same(serviceMonitorProblems(object), [], `${label} has the monitoring.coreos.com/v1 shape (checked by hand)`)
        continue
      }
      await t.resolves(validateWithKubernetesModels(object), `${label} validates (kubernetes-models)`)
    }
  }
})

t.test('every object carries the standard labels and the release name', async t => {
  for (const set of VALUE_SETS) {
    for (const object of await renderSet(set.name)) {
      const labels = object.metadata.labels ?? {}
      t.match(labels, {
        'app.kubernetes.io/name': 'gatehouse',
        'app.kubernetes.io/instance': RELEASE,
        'app.kubernetes.io/version': chartMeta.appVersion,
        'app.kubernetes.io/managed-by': 'Helm',
        'helm.sh/chart': `gatehouse-${chartMeta.version}`,
      }, `${set.name}: ${object.kind} ${object.metadata.name}`)
      t.ok(object.metadata.name.startsWith(FULLNAME) || object.metadata.name === 'my-claim', `${object.kind} named after the release`)
    }
  }
})

t.test('the image defaults to the chart appVersion', async t => {
  const objects = await renderSet('defaults')
  t.equal(gateway(objects).image, `gatehouse:${chartMeta.appVersion}`)
  t.equal(podSpecOf(only(objects, 'Pod')).containers[0].image, `gatehouse:${chartMeta.appVersion}`, 'the test pod uses the same image')
})

t.test('pods run hardened: non-root, read-only root, no capabilities, RuntimeDefault seccomp, no escalation', async t => {
  for (const set of VALUE_SETS) {
    const objects = await renderSet(set.name)
    for (const workload of objects.filter(o => o.kind === 'Deployment' || o.kind === 'Pod')) {
      const pod = podSpecOf(workload)
      const where = `${set.name}: ${workload.kind}`
      t.match(pod.securityContext, { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }, `${where} pod securityContext`)
      t.ok(pod.securityContext.runAsUser > 0, `${where} runs as a non-zero uid`)
      t.equal(pod.automountServiceAccountToken, false, `${where} mounts no API token`)
      for (const c of pod.containers) {
        t.same(c.securityContext.capabilities, { drop: ['ALL'] }, `${where} ${c.name} drops all capabilities`)
        t.match(c.securityContext, {
          runAsNonRoot: true,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          privileged: false,
          seccompProfile: { type: 'RuntimeDefault' },
        }, `${where} ${c.name} container securityContext`)
        t.ok(c.resources?.requests?.cpu && c.resources?.requests?.memory, `${where} ${c.name} has cpu/memory requests`)
        t.ok(c.resources?.limits?.memory, `${where} ${c.name} has a memory limit`)
        // The root filesystem is read-only, so /tmp must be a writable emptyDir.
        const tmp = c.volumeMounts.find((m: any) => m.mountPath === '/tmp')
        t.ok(tmp, `${where} ${c.name} mounts /tmp`)
        t.ok(pod.volumes.find((v: any) => v.name === tmp?.name)?.emptyDir, `${where} /tmp is an emptyDir`)
      }
    }
  }
})

t.test('probes: startup and liveness on /livez, readiness on /readyz, on the named gateway port 8888', async t => {
  const c = gateway(await renderSet('defaults'))
  const http = c.ports.find((p: any) => p.name === 'http')
  t.equal(http.containerPort, 8888)
  t.match(c.startupProbe, { httpGet: { path: '/livez', port: 'http' } })
  t.match(c.livenessProbe, { httpGet: { path: '/livez', port: 'http' } })
  t.match(c.readinessProbe, { httpGet: { path: '/readyz', port: 'http' } })
  t.ok(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold >= 30, 'the startup probe allows at least 30 s')
  t.equal(configData(await renderSet('defaults')).PORT, '8888', 'the gateway is told to listen on the probed port')
})

t.test('terminationGracePeriodSeconds exceeds the shutdown timeout and follows it', async t => {
  for (const set of VALUE_SETS) {
    const objects = await renderSet(set.name)
    const pod = podSpecOf(only(objects, 'Deployment'))
    const timeout = Number(configData(objects).SHUTDOWN_TIMEOUT_SECONDS)
    const preStop = Number(gateway(objects).lifecycle?.preStop?.exec?.command?.[1] ?? 0)
    t.ok(pod.terminationGracePeriodSeconds > timeout + preStop,
      `${set.name}: grace ${pod.terminationGracePeriodSeconds} s > preStop ${preStop} s + shutdown ${timeout} s`)
  }
  const longer = await renderSet('mongodb, 3 replicas, autoscaling, PDB, NetworkPolicy, ServiceMonitor, persistence off')
  t.equal(configData(longer).SHUTDOWN_TIMEOUT_SECONDS, '60', 'shutdown.timeoutSeconds becomes SHUTDOWN_TIMEOUT_SECONDS')
  t.equal(podSpecOf(only(longer, 'Deployment')).terminationGracePeriodSeconds, 5 + 60 + 10, 'derived from the value')
})

t.test('config.reauthSeconds and config.queryTokens become AUTH_REAUTH_SECONDS and AUTH_QUERY_TOKENS', async t => {
  t.match(configData(await renderSet('defaults')), { AUTH_REAUTH_SECONDS: '600', AUTH_QUERY_TOKENS: 'true' }, 'the gateway defaults')
  const strict = configData(await render({ config: { reauthSeconds: 0, queryTokens: false } }))
  t.match(strict, { AUTH_REAUTH_SECONDS: '0', AUTH_QUERY_TOKENS: 'false' })
})

t.test('config.modelDiscoveryHours becomes GEMINI_MODEL_DISCOVERY_HOURS: 6 by default, 0 turns discovery off', async t => {
  t.equal(loadConfig(configData(await render({}))).modelDiscoveryHours, 6)
  t.equal(loadConfig(configData(await render({ config: { modelDiscoveryHours: 0 } }))).modelDiscoveryHours, 0)
})

t.test('config.keyDefaultDays becomes PROXY_KEY_DEFAULT_DAYS, 0 included', async t => {
  t.equal(configData(await renderSet('defaults')).PROXY_KEY_DEFAULT_DAYS, '90', 'the gateway default')
  t.equal(configData(await render({ config: { keyDefaultDays: 0 } })).PROXY_KEY_DEFAULT_DAYS, '0')
})

t.test('config.publicSignup becomes AUTH_PUBLIC_SIGNUP: open by default, as the seed wants; false closes sign-up', async t => {
  t.equal(configData(await renderSet('defaults')).AUTH_PUBLIC_SIGNUP, 'true')
  t.equal(configData(await renderSet('ingress with TLS')).AUTH_PUBLIC_SIGNUP, 'false')
})

t.test('console.enabled, console.path and console.allowHttp become CONSOLE_ENABLED, CONSOLE_PATH and CONSOLE_ALLOW_HTTP', async t => {
  t.match(configData(await renderSet('defaults')), { CONSOLE_ENABLED: 'true', CONSOLE_PATH: '/console', CONSOLE_ALLOW_HTTP: 'false' }, 'the gateway defaults')
  const moved = configData(await render({ console: { enabled: false, path: '/team/console', allowHttp: true } }))
  t.match(moved, { CONSOLE_ENABLED: 'false', CONSOLE_PATH: '/team/console', CONSOLE_ALLOW_HTTP: 'true' })
  t.match(loadConfig(moved), { consoleEnabled: false, consolePath: '/team/console', consoleAllowHttp: true }, 'values the gateway accepts')
  await t.rejects(render({ console: { enabled: true, path: 'console' } }), 'a path without its leading slash is refused by the schema')
})

t.test('the chart sets only variables the gateway reads', async t => {
  for (const set of VALUE_SETS) {
    const objects = await renderSet(set.name)
    const names = [...Object.keys(configData(objects)), ...(gateway(objects).env ?? []).map((e: any) => e.name)]
    for (const name of names) t.ok(CONTRACT_ENV.has(name), `${set.name}: ${name} is a contract variable`)
  }
})

t.test('the chart-made Secret holds exactly the values given, and every reference points into it', async t => {
  const name = 'mongodb, 3 replicas, autoscaling, PDB, NetworkPolicy, ServiceMonitor, persistence off'
  const objects = await renderSet(name)
  const secret = only(objects, 'Secret')
  const decoded = Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]))
  const given = valuesOf(name).secrets
  t.same(Object.values(decoded).sort(), Object.values(given).sort(), 'one key per given value')
  t.equal(decoded.credentials, CREDENTIALS_JSON)

  const expected: Record<string, string> = {
    GEMINI_AUTH_PASSWORD: given.proxyPassword,
    GEMINI_CREDENTIALS: given.credentials,
    GEMINI_API_KEY: given.apiKey,
    GEMINI_OAUTH_CLIENT_SECRET: given.oauthClientSecret,
    AUTH_ADMIN_PASSWORD: given.adminPassword,
    MONGODB_URL: given.mongodbUrl,
  }
  for (const [env, value] of Object.entries(expected)) {
    const ref = envNamed(objects, env)?.valueFrom?.secretKeyRef
    t.equal(ref?.name, secret.metadata.name, `${env} reads the chart's Secret`)
    t.equal(decoded[ref?.key], value, `${env} reads the key holding its value`)
  }
  t.equal(envNamed(objects, 'MONGODB_URL').valueFrom.secretKeyRef.optional, false, 'with several pods MONGODB_URL is required')
  t.equal(envNamed(objects, 'GEMINI_AUTH_PASSWORD').valueFrom.secretKeyRef.optional, true, 'other keys are optional')
  t.notOk(JSON.stringify(only(objects, 'Deployment')).includes(given.proxyPassword), 'no secret value appears in the Deployment')
  t.notOk(JSON.stringify(only(objects, 'ConfigMap')).includes(given.mongodbUrl), 'no secret value appears in the ConfigMap')
})

t.test('defaults make a Secret holding only the generated admin password, and reference only that', async t => {
  const objects = await renderSet('defaults')
  t.same(Object.keys(only(objects, 'Secret').data), ['admin-password'])
  t.same((gateway(objects).env ?? []).map((e: any) => e.name), ['AUTH_ADMIN_PASSWORD'])
})

t.test('with existingSecret the chart makes no Secret and references only the declared keys, optionally', async t => {
  const name = 'existing secret, credentials mounted as a file'
  const objects = await renderSet(name)
  const { existingSecret } = valuesOf(name)
  t.equal(objects.filter(o => o.kind === 'Secret').length, 0, 'no chart-made Secret')
  const refs = (gateway(objects).env ?? []).map((e: any) => ({ env: e.name, ...e.valueFrom.secretKeyRef }))
  t.same(refs.map((r: any) => r.env).sort(), ['AUTH_ADMIN_PASSWORD', 'GEMINI_AUTH_PASSWORD', 'GEMINI_OAUTH_CLIENT_SECRET'])
  const declared = Object.values(existingSecret.keys)
  for (const ref of refs) {
    t.equal(ref.name, existingSecret.name, `${ref.env} reads the existing Secret`)
    t.ok(declared.includes(ref.key), `${ref.env} reads a declared key (${ref.key})`)
    t.equal(ref.optional, true, `${ref.env} is optional`)
  }
  t.equal(envNamed(objects, 'GEMINI_AUTH_PASSWORD').valueFrom.secretKeyRef.key, 'proxy-pw')
  t.notOk(envNamed(objects, 'MONGODB_URL'), 'no MONGODB_URL when the Secret declares none')

  // mountAs: file: the credentials key is a read-only file and GOOGLE_APPLICATION_CREDENTIALS names it.
  t.notOk(envNamed(objects, 'GEMINI_CREDENTIALS'), 'credentials are not passed as a variable')
  const pod = podSpecOf(only(objects, 'Deployment'))
  const volume = pod.volumes.find((v: any) => v.name === 'credentials')
  t.match(volume.secret, { secretName: existingSecret.name, items: [{ key: 'oauth.json', path: 'credentials.json' }] })
  const mount = gateway(objects).volumeMounts.find((m: any) => m.name === 'credentials')
  t.equal(mount.readOnly, true)
  t.equal(configData(objects).GOOGLE_APPLICATION_CREDENTIALS, `${mount.mountPath}/credentials.json`)
  t.equal(configData(objects).GEMINI_CREDENTIALS_WRITE_BACK, 'false', 'a read-only file is not written back: refreshed tokens stay in memory')
  t.equal(configData(objects).GEMINI_OAUTH_CLIENT_ID, 'id.apps.example.com')
  t.equal(configData(objects).GOOGLE_CLOUD_PROJECT, 'my-project')
  t.equal(configData(objects).IMAGE_FETCH_ALLOWED_PORTS, '80,443,8080', 'config.imageFetchAllowedPorts becomes IMAGE_FETCH_ALLOWED_PORTS')
  t.same(loadConfig(configData(objects)).geminiLimits, { member: { rpm: 60, tokensPerDay: null, usdPerDayMicros: 2_500_000 }, dev: { allow: ['batches', 'caches', 'files'], tools: ['googleSearch', 'urlContext'] } }, 'config.limits becomes GEMINI_LIMITS, JSON the gateway accepts, a level\'s allow and tools included')
  t.equal(loadConfig(configData(objects)).geminiMaxCacheTtlSeconds, 900, 'config.maxCacheTtlSeconds becomes GEMINI_MAX_CACHE_TTL_SECONDS')
})

t.test('pod template carries config and secret checksums that change with the values', async t => {
  // An explicit admin password: a generated one differs between two `helm template` runs (an upgrade keeps it).
  const checksums = async (values: { secrets: Record<string, string>, config?: object }) => {
    const annotations = only(await render({ ...values, secrets: { adminPassword: 'admin-password-1', ...values.secrets } }), 'Deployment').spec.template.metadata.annotations
    return { config: annotations['checksum/config'], secret: annotations['checksum/secret'] }
  }
  const base = await checksums({ secrets: { proxyPassword: 'proxy-password-one' } })
  t.match(base, { config: /^[0-9a-f]{64}$/, secret: /^[0-9a-f]{64}$/ })
  const otherSecret = await checksums({ secrets: { proxyPassword: 'proxy-password-two' } })
  t.not(otherSecret.secret, base.secret, 'a new secret value rolls the pods')
  t.equal(otherSecret.config, base.config)
  const otherConfig = await checksums({ secrets: { proxyPassword: 'proxy-password-one' }, config: { logLevel: 'debug' } })
  t.not(otherConfig.config, base.config, 'a new setting rolls the pods')
  t.equal(otherConfig.secret, base.secret)
})

t.test('the Service selects the gateway pods and never the helm test pod', async t => {
  for (const set of VALUE_SETS) {
    const objects = await renderSet(set.name)
    const service = only(objects, 'Service')
    const deployment = only(objects, 'Deployment')
    const testPod = only(objects, 'Pod')
    t.ok(selects(service.spec.selector, deployment.spec.template.metadata.labels), `${set.name}: Service selects the pods`)
    t.same(deployment.spec.selector.matchLabels, service.spec.selector, 'Deployment and Service use one selector')
    t.notOk(selects(service.spec.selector, testPod.metadata.labels), 'the test pod is not a backend')
    const names = new Set(gateway(objects).ports.map((p: any) => p.name))
    for (const port of service.spec.ports) t.ok(names.has(port.targetPort), `Service port ${port.name} targets a container port`)
  }
})

t.test('the helm test hook pod calls /health through the Service', async t => {
  const objects = await renderSet('defaults')
  const pod = only(objects, 'Pod')
  t.equal(pod.metadata.annotations?.['helm.sh/hook'], 'test')
  t.equal(pod.spec.restartPolicy, 'Never')
  const command: string[] = pod.spec.containers[0].command
  t.equal(command[0], 'node')
  t.equal(command.at(-1), `http://${FULLNAME}.${NAMESPACE}.svc:8888/health`)
})

t.test('mongodb with autoscaling: HPA v2 owns the replica count; PDB, NetworkPolicy and ServiceMonitor select the gateway', async t => {
  const objects = await renderSet('mongodb, 3 replicas, autoscaling, PDB, NetworkPolicy, ServiceMonitor, persistence off')
  const deployment = only(objects, 'Deployment')
  const selector = deployment.spec.selector.matchLabels
  t.equal(deployment.spec.replicas, undefined, 'no replicas field fights the autoscaler')
  t.equal(deployment.spec.strategy.type, 'RollingUpdate')
  t.equal(objects.filter(o => o.kind === 'PersistentVolumeClaim').length, 0, 'no volume with MongoDB')
  t.equal(configData(objects).MONGODB_DB, 'gatehouse')
  t.equal(configData(objects).OTEL_EXPORTER_OTLP_ENDPOINT, 'http://otel-collector.observability.svc:4318')

  const hpa = only(objects, 'HorizontalPodAutoscaler')
  t.equal(hpa.apiVersion, 'autoscaling/v2')
  t.same(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name })
  t.match(hpa.spec, { minReplicas: 3, maxReplicas: 10 })
  t.same(hpa.spec.metrics.map((m: any) => [m.resource.name, m.resource.target.averageUtilization]), [['cpu', 75], ['memory', 80]])

  const pdb = only(objects, 'PodDisruptionBudget')
  t.same(pdb.spec.selector.matchLabels, selector)
  t.equal(pdb.spec.minAvailable, '50%')
  t.notOk('maxUnavailable' in pdb.spec)

  const np = only(objects, 'NetworkPolicy')
  t.same(np.spec.podSelector.matchLabels, selector)
  t.same(np.spec.policyTypes, ['Ingress', 'Egress'])
  t.same(np.spec.ingress[0].ports, [{ port: 'http', protocol: 'TCP' }])
  t.same(np.spec.ingress[1], { ports: [{ port: 'metrics', protocol: 'TCP' }] }, 'the metrics port has its own rule')
  const peers = np.spec.ingress[0].from
  t.ok(peers.some((p: any) => p.namespaceSelector), 'the configured peer is allowed')
  t.ok(peers.some((p: any) => selects(p.podSelector?.matchLabels ?? { none: 'x' }, only(objects, 'Pod').metadata.labels)), 'the test pod is allowed')
  const egressPorts = np.spec.egress.flatMap((r: any) => r.ports ?? [])
  t.ok(egressPorts.some((p: any) => p.port === 53 && p.protocol === 'UDP'), 'DNS is allowed')
  t.ok(egressPorts.some((p: any) => p.port === 443), 'HTTPS to the upstream is allowed')
  t.ok(egressPorts.some((p: any) => p.port === 27017), 'MongoDB is allowed')
  t.ok(np.spec.egress.some((r: any) => r.to?.[0]?.ipBlock?.cidr === '10.0.0.0/8'), 'extra rules are appended')

  const sm = only(objects, 'ServiceMonitor')
  t.same(sm.spec.selector.matchLabels, selector)
  t.same(sm.spec.namespaceSelector.matchNames, [NAMESPACE])
  t.equal(sm.metadata.labels?.release, 'prometheus')
  t.match(sm.spec.endpoints, [{ port: 'metrics', path: '/metrics' }], '/metrics is scraped on its own port')
  t.ok(only(objects, 'Service').spec.ports.some((p: any) => p.name === sm.spec.endpoints[0].port), 'the scraped port exists on the Service')
})

t.test('embedded store with persistence: a claim mounted at /app/data, AUTH_DATA_FILE on it, Recreate strategy', async t => {
  const objects = await renderSet('embedded store with persistence')
  const pvc = only(objects, 'PersistentVolumeClaim')
  t.match(pvc.spec, { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '2Gi' } } })
  t.equal(pvc.metadata.annotations?.['helm.sh/resource-policy'], 'keep', 'accounts survive an uninstall')
  const deployment = only(objects, 'Deployment')
  t.equal(deployment.spec.strategy.type, 'Recreate', 'never two pods on one store file')
  t.equal(deployment.spec.replicas, 1)
  const volume = podSpecOf(deployment).volumes.find((v: any) => v.persistentVolumeClaim)
  t.equal(volume.persistentVolumeClaim.claimName, pvc.metadata.name)
  const mount = gateway(objects).volumeMounts.find((m: any) => m.name === volume.name)
  t.ok(configData(objects).AUTH_DATA_FILE.startsWith(mount.mountPath + '/'), 'the store file is on the volume')
  t.notOk(configData(objects).MONGODB_DB, 'no MongoDB settings for the embedded store')

  const existing = await renderSet('embedded store on an existing claim')
  t.equal(existing.filter(o => o.kind === 'PersistentVolumeClaim').length, 0, 'no claim is made for an existing one')
  t.equal(podSpecOf(only(existing, 'Deployment')).volumes.find((v: any) => v.persistentVolumeClaim).persistentVolumeClaim.claimName, 'my-claim')
})

t.test('by default the chart serves /metrics on its own port: METRICS_PORT, a container and Service port named metrics', async t => {
  const objects = await renderSet('defaults')
  t.equal(configData(objects).METRICS_PORT, '9464', 'the gateway serves /metrics on 9464 only, not on the HTTP port')
  t.ok(gateway(objects).ports.some((p: any) => p.name === 'metrics' && p.containerPort === 9464))
  t.ok(only(objects, 'Service').spec.ports.some((p: any) => p.name === 'metrics' && p.port === 9464 && p.targetPort === 'metrics'))
  const monitored = await render({ metrics: { serviceMonitor: { enabled: true } }, networkPolicy: { enabled: true, ingressFrom: [{ podSelector: { matchLabels: { app: 'ingress' } } }] } })
  t.match(only(monitored, 'ServiceMonitor').spec.endpoints, [{ port: 'metrics', path: '/metrics' }], 'the ServiceMonitor scrapes the metrics port')
  const np = only(monitored, 'NetworkPolicy')
  t.same(np.spec.ingress.map((r: any) => r.ports), [[{ port: 'http', protocol: 'TCP' }], [{ port: 'metrics', protocol: 'TCP' }]])
  t.notOk(np.spec.ingress[1].from, 'the metrics port is open to every source in the cluster unless networkPolicy.metricsFrom says otherwise')

  const onMain = await render({ metrics: { port: 0, serviceMonitor: { enabled: true } }, networkPolicy: { enabled: true } })
  t.notOk(configData(onMain).METRICS_PORT, 'metrics.port 0: no METRICS_PORT, /metrics on the HTTP port')
  t.notOk(gateway(onMain).ports.some((p: any) => p.name === 'metrics'))
  t.same(only(onMain, 'Service').spec.ports.map((p: any) => p.name), ['http'])
  t.match(only(onMain, 'ServiceMonitor').spec.endpoints, [{ port: 'http', path: '/metrics' }])
  t.equal(only(onMain, 'NetworkPolicy').spec.ingress.length, 1)
})

t.test('metrics on a separate port: METRICS_PORT, a named container and Service port, scraped there', async t => {
  const objects = await renderSet('metrics on a separate port')
  t.equal(configData(objects).METRICS_PORT, '9464')
  t.ok(gateway(objects).ports.some((p: any) => p.name === 'metrics' && p.containerPort === 9464))
  t.ok(only(objects, 'Service').spec.ports.some((p: any) => p.name === 'metrics' && p.port === 9464 && p.targetPort === 'metrics'))
  t.match(only(objects, 'ServiceMonitor').spec.endpoints, [{ port: 'metrics', path: '/metrics', interval: '15s', scrapeTimeout: '5s' }])
  const np = only(objects, 'NetworkPolicy')
  t.same(np.spec.policyTypes, ['Ingress'], 'egress stays open unless asked')
  t.notOk(np.spec.ingress[0].from, 'the HTTP port is open to every source by default')
  t.match(np.spec.ingress[1], { ports: [{ port: 'metrics' }], from: [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }] })
  t.equal(only(objects, 'PodDisruptionBudget').spec.maxUnavailable, 1, 'the default PDB allows one pod down')
  t.equal(only(objects, 'Deployment').spec.replicas, 1)
})

t.test('the ServiceMonitor shape check catches a broken object', async t => {
  const broken = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: 'Bad_Name' },
    spec: { selector: {}, endpoints: [{ port: 9464, path: 'metrics', interval: 'often', typo: true }] },
  }
  const problems = serviceMonitorProblems(broken)
  t.ok(problems.length >= 5, problems.join('; '))
})

t.test('with the Ingress enabled, TRUSTED_PROXIES names the ingress controller so each client is counted by its own address', async t => {
  const defaults = configData(await renderSet('defaults'))
  t.notOk('TRUSTED_PROXIES' in defaults, 'no Ingress: no proxy is trusted')
  t.equal(defaults.AUTH_SIGNUPS_PER_ADDRESS, '10')
  t.equal(defaults.AUTH_SIGNUP_WINDOW_SECONDS, '3600')
  t.notOk((await renderSet('defaults')).some(o => o.kind === 'Ingress'))

  const objects = await renderSet('ingress with TLS')
  t.equal(configData(objects).TRUSTED_PROXIES, '10.42.0.0/16', 'ingress.trustedProxies')
  t.equal(configData(objects).AUTH_SIGNUPS_PER_ADDRESS, '20')
  t.equal(configData(objects).AUTH_SIGNUP_WINDOW_SECONDS, '600')
  const ingress = only(objects, 'Ingress')
  t.equal(ingress.spec.ingressClassName, 'nginx')
  t.same(ingress.spec.tls, [{ secretName: 'gatehouse-tls', hosts: ['gatehouse.example.com'] }])
  t.same(ingress.spec.rules, [{
    host: 'gatehouse.example.com',
    http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: FULLNAME, port: { name: 'http' } } } }] },
  }], "every path to the Service's http port")

  const byDefault = configData(await render({ ingress: { enabled: true } }))
  t.equal(byDefault.TRUSTED_PROXIES, '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7', 'the private ranges pod networks use, by default')
  const own = configData(await render({ ingress: { enabled: true }, config: { trustedProxies: '192.0.2.10' } }))
  t.equal(own.TRUSTED_PROXIES, '192.0.2.10', 'config.trustedProxies wins')
  t.equal(configData(await render({ config: { trustedProxies: '192.0.2.10' } })).TRUSTED_PROXIES, '192.0.2.10', 'and works without the Ingress (your own load balancer)')
})

t.test('the model policy values reach the ConfigMap as GEMINI_MODEL_ACCESS and PROXY_MIN_ACCESS_LEVEL, and are left out when empty', async t => {
  const data = configData(await renderSet('mongodb, 3 replicas, autoscaling, PDB, NetworkPolicy, ServiceMonitor, persistence off'))
  t.equal(data.GEMINI_MODEL_ACCESS, '{"member":["gemini-2.5-flash*"]}')
  t.equal(data.PROXY_MIN_ACCESS_LEVEL, 'member')
  const defaults = configData(await renderSet('defaults'))
  t.equal(configData(await render({ config: { proxyMinAccessLevel: 'dev' } })).PROXY_MIN_ACCESS_LEVEL, 'dev')
  t.notOk('GEMINI_MODEL_ACCESS' in defaults || 'PROXY_MIN_ACCESS_LEVEL' in defaults, 'unset: the library defaults apply')
})

t.test('Vertex AI: Workload Identity annotations on the ServiceAccount, the key file from a Secret, GOOGLE_CLOUD_LOCATION and VERTEX_ENDPOINT', async t => {
  const objects = await renderSet('Vertex AI with Workload Identity and a mounted service-account key')
  t.equal(only(objects, 'ServiceAccount').metadata.annotations?.['iam.gke.io/gcp-service-account'], 'gatehouse@my-project.iam.gserviceaccount.com')
  const data = configData(objects)
  t.match(data, { GEMINI_BACKEND: 'vertex', GOOGLE_CLOUD_PROJECT: 'my-project', GOOGLE_CLOUD_LOCATION: 'europe-west4', VERTEX_ENDPOINT: 'https://europe-west4-aiplatform.googleapis.com', GOOGLE_APPLICATION_CREDENTIALS: '/etc/vertex/sa.json' })
  const pod = podSpecOf(only(objects, 'Deployment'))
  t.same(gateway(objects).volumeMounts.find((m: any) => m.name === 'service-account-key'), { name: 'service-account-key', mountPath: '/etc/vertex', readOnly: true })
  t.same(pod.volumes.find((v: any) => v.name === 'service-account-key').secret, { secretName: 'vertex-key', defaultMode: 288, items: [{ key: 'sa.json', path: 'sa.json' }] })
  t.equal(loadConfig(data).geminiBackend, 'vertex', 'the gateway accepts what the chart renders')
  const defaults = configData(await renderSet('defaults'))
  t.notOk('GOOGLE_CLOUD_LOCATION' in defaults || 'VERTEX_ENDPOINT' in defaults || 'GOOGLE_APPLICATION_CREDENTIALS' in defaults, 'unset by default')
})

t.test('credentialsDir: every key of the Secret a read-only file in GEMINI_CREDENTIALS_DIR, written back by nobody', async t => {
  const objects = await renderSet('Code Assist credential pool from a Secret, Vertex locations listed')
  const data = configData(objects)
  t.match(data, { GEMINI_CREDENTIALS_DIR: '/etc/gatehouse/credentials.d', GEMINI_CREDENTIALS_WRITE_BACK: 'false', GOOGLE_CLOUD_LOCATION: 'us-central1, europe-west4' })
  const pod = podSpecOf(only(objects, 'Deployment'))
  t.same(gateway(objects).volumeMounts.find((m: any) => m.name === 'credentials-dir'), { name: 'credentials-dir', mountPath: '/etc/gatehouse/credentials.d', readOnly: true })
  t.same(pod.volumes.find((v: any) => v.name === 'credentials-dir').secret, { secretName: 'code-assist-pool', defaultMode: 288 }, 'every key of the Secret, mode 0440')
  t.match(loadConfig(data), { geminiBackend: 'code-assist', credentialsDir: '/etc/gatehouse/credentials.d', credentialsWriteBack: false }, 'the gateway accepts what the chart renders')
  const defaults = await renderSet('defaults')
  t.notOk('GEMINI_CREDENTIALS_DIR' in configData(defaults) || 'GEMINI_CREDENTIALS_WRITE_BACK' in configData(defaults), 'unset by default')
  t.notOk(podSpecOf(only(defaults, 'Deployment')).volumes.some((v: any) => v.name === 'credentials-dir'))
})
