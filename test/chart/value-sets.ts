// The value sets the chart tests render, lint and validate. Not a test file itself.

export const CREDENTIALS_JSON = JSON.stringify({
  client_id: 'id.apps.example.com',
  client_secret: 'client-secret',
  refresh_token: 'refresh-token',
  token_uri: 'https://oauth2.example.com/token',
  type: 'authorized_user',
})

export interface ValueSet {
  name: string
  values: Record<string, any>
}

export const VALUE_SETS: ValueSet[] = [
  { name: 'defaults', values: {} },
  {
    name: 'existing secret, credentials mounted as a file',
    values: {
      existingSecret: {
        name: 'gatehouse-managed',
        keys: { proxyPassword: 'proxy-pw', credentials: 'oauth.json', adminPassword: 'admin-pw', oauthClientSecret: 'client-secret' },
      },
      credentials: { mountAs: 'file' },
      config: { oauthClientId: 'id.apps.example.com', projectId: 'my-project', imageFetchAllowedPorts: '80,443,8080', limits: { member: { rpm: 60, tokens_per_day: null, usd_per_day: '2.50' }, dev: { allow: ['batches', 'caches', 'files'], tools: ['googleSearch', 'urlContext'] } }, maxCacheTtlSeconds: 900 },
    },
  },
  {
    name: 'mongodb, 3 replicas, autoscaling, PDB, NetworkPolicy, ServiceMonitor, persistence off',
    values: {
      replicaCount: 3,
      secrets: {
        proxyPassword: 'proxy-password-value',
        credentials: CREDENTIALS_JSON,
        apiKey: 'api-key-value',
        oauthClientSecret: 'oauth-secret-value',
        adminPassword: 'admin-password-1',
        mongodbUrl: 'mongodb://gatehouse:pw@mongodb.db.svc:27017/?authSource=admin',
      },
      config: { mongodbDb: 'gatehouse', backend: 'code-assist', logLevel: 'warn', modelAccess: '{"member":["gemini-2.5-flash*"]}', proxyMinAccessLevel: 'member' },
      autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 10, targetMemoryUtilizationPercentage: 80 },
      podDisruptionBudget: { enabled: true, minAvailable: '50%', maxUnavailable: '' },
      networkPolicy: {
        enabled: true,
        ingressFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }],
        egress: { enabled: true, extraRules: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8' } }], ports: [{ port: 4318, protocol: 'TCP' }] }] },
      },
      metrics: { serviceMonitor: { enabled: true, labels: { release: 'prometheus' } } },
      tracing: { otlpEndpoint: 'http://otel-collector.observability.svc:4318' },
      persistence: { enabled: false },
      shutdown: { timeoutSeconds: 60 },
    },
  },
  {
    name: 'Vertex AI with Workload Identity and a mounted service-account key',
    values: {
      serviceAccount: { annotations: { 'iam.gke.io/gcp-service-account': 'gatehouse@my-project.iam.gserviceaccount.com' } },
      serviceAccountKey: { secretName: 'vertex-key', key: 'sa.json', mountPath: '/etc/vertex' },
      config: { backend: 'vertex', projectId: 'my-project', vertexLocation: 'europe-west4', vertexEndpoint: 'https://europe-west4-aiplatform.googleapis.com' },
      secrets: { proxyPassword: 'proxy-password-value' },
    },
  },
  {
    name: 'Code Assist credential pool from a Secret, Vertex locations listed',
    values: {
      credentialsDir: { secretName: 'code-assist-pool' },
      config: { vertexLocation: 'us-central1, europe-west4' },
      secrets: { proxyPassword: 'proxy-password-value' },
    },
  },
  {
    name: 'embedded store with persistence',
    values: {
      secrets: { proxyPassword: 'proxy-password-value', apiKey: 'api-key' },
      persistence: { enabled: true, storageClass: 'fast', size: '2Gi' },
    },
  },
  {
    name: 'ingress with TLS',
    values: {
      ingress: {
        enabled: true,
        className: 'nginx',
        annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '32m' },
        hosts: ['gatehouse.example.com'],
        tls: [{ secretName: 'gatehouse-tls', hosts: ['gatehouse.example.com'] }],
        trustedProxies: '10.42.0.0/16',
      },
      config: { signupsPerAddress: 20, signupWindowSeconds: 600, publicSignup: false },
    },
  },
  {
    name: 'embedded store on an existing claim',
    values: { persistence: { enabled: true, existingClaim: 'my-claim' } },
  },
  {
    name: 'metrics on a separate port',
    values: {
      metrics: { port: 9464, serviceMonitor: { enabled: true, interval: '15s', scrapeTimeout: '5s' } },
      networkPolicy: { enabled: true, metricsFrom: [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }] },
      podDisruptionBudget: { enabled: true },
    },
  },
]
