{{/* Names: the release's resources are called <release>-gatehouse unless the release name already holds the chart name. */}}
{{- define "gatehouse.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "gatehouse.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gatehouse.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The selector includes the component so the helm-test pod (component: test) is never picked up by the Service, PDB or NetworkPolicy. */}}
{{- define "gatehouse.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gatehouse.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: gateway
{{- end }}

{{- define "gatehouse.commonLabels" -}}
helm.sh/chart: {{ include "gatehouse.chart" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | replace "+" "_" | replace ":" "_" | replace "@" "_" | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gatehouse
{{- end }}

{{- define "gatehouse.labels" -}}
{{ include "gatehouse.commonLabels" . }}
{{ include "gatehouse.selectorLabels" . }}
{{- end }}

{{- define "gatehouse.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "gatehouse.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "gatehouse.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* The port the gateway listens on inside the pod (the image's EXPOSE). */}}
{{- define "gatehouse.containerPort" -}}8888{{- end }}

{{/* Seconds Kubernetes waits after starting termination: the preStop pause, the gateway's own drain deadline, and a margin for closing the store. */}}
{{- define "gatehouse.terminationGracePeriodSeconds" -}}
{{- add (int .Values.shutdown.preStopSleepSeconds) (int .Values.shutdown.timeoutSeconds) (int .Values.shutdown.extraGraceSeconds) }}
{{- end }}

{{/* Secret entries: value name -> environment variable and the key used in the chart-made Secret. */}}
{{- define "gatehouse.secretEntries" -}}
proxyPassword: {env: GEMINI_AUTH_PASSWORD, key: proxy-password}
credentials: {env: GEMINI_CREDENTIALS, key: credentials}
apiKey: {env: GEMINI_API_KEY, key: api-key}
oauthClientSecret: {env: GEMINI_OAUTH_CLIENT_SECRET, key: oauth-client-secret}
adminPassword: {env: AUTH_ADMIN_PASSWORD, key: admin-password}
mongodbUrl: {env: MONGODB_URL, key: mongodb-url}
{{- end }}

{{- define "gatehouse.secretName" -}}
{{- .Values.existingSecret.name | default (include "gatehouse.fullname" .) }}
{{- end }}

{{/* The key holding one value (dict "root" $ "field" "proxyPassword"), or "" when no Secret holds it. The chart-made Secret always holds the admin password. */}}
{{- define "gatehouse.secretKey" -}}
{{- $v := .root.Values }}
{{- if $v.existingSecret.name }}
{{- index $v.existingSecret.keys .field }}
{{- else if or (index $v.secrets .field) (eq .field "adminPassword") }}
{{- (index (include "gatehouse.secretEntries" .root | fromYaml) .field).key }}
{{- end }}
{{- end }}

{{/*
The admin password of the chart-made Secret: secrets.adminPassword when given; else the one the release's Secret
already holds (an upgrade keeps it); else 32 random letters and digits. Kept in .Values.secrets so that the
Secret and the Deployment's checksum of it, rendered separately, see one value.
*/}}
{{- define "gatehouse.adminPassword" -}}
{{- if not .Values.secrets.adminPassword }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "gatehouse.secretName" .) }}
{{- $kept := dig "data" "admin-password" "" $existing }}
{{- $_ := set .Values.secrets "adminPassword" (ternary (b64dec $kept) (randAlphaNum 32) (ne $kept "")) }}
{{- end }}
{{- .Values.secrets.adminPassword }}
{{- end }}

{{/* "true" when the gateway is given a MongoDB URL (from values or a declared existingSecret key). */}}
{{- define "gatehouse.usesMongodb" -}}
{{- if include "gatehouse.secretKey" (dict "root" . "field" "mongodbUrl") }}true{{ end }}
{{- end }}

{{/* "true" when more than one pod can run at once. */}}
{{- define "gatehouse.multiReplica" -}}
{{- if or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled }}true{{ end }}
{{- end }}

{{- define "gatehouse.credentialsAsFile" -}}
{{- if and (eq .Values.credentials.mountAs "file") (include "gatehouse.secretKey" (dict "root" . "field" "credentials")) }}true{{ end }}
{{- end }}

{{- define "gatehouse.pvcName" -}}
{{- .Values.persistence.existingClaim | default (printf "%s-data" (include "gatehouse.fullname" .)) }}
{{- end }}

{{/* Refuses value combinations that would deploy something broken; each message says why. */}}
{{- define "gatehouse.validate" -}}
{{- $v := .Values }}
{{- if include "gatehouse.multiReplica" . }}
{{- if not (include "gatehouse.usesMongodb" .) }}
{{- fail (printf "gatehouse: %s needs MongoDB. The embedded store keeps users and sessions inside each pod, so every pod would have its own accounts and a session made on one pod would be unknown to the others. Set secrets.mongodbUrl (or existingSecret.name with existingSecret.keys.mongodbUrl), or keep replicaCount at 1 with autoscaling.enabled false." (ternary "autoscaling" (printf "replicaCount=%d" (int $v.replicaCount)) $v.autoscaling.enabled)) }}
{{- end }}
{{- end }}
{{- if $v.existingSecret.name }}
{{- range $field, $value := $v.secrets }}
{{- if $value }}
{{- fail (printf "gatehouse: secrets.%s is set together with existingSecret.name; the chart makes no Secret when existingSecret.name is set, so put the value in that Secret and name its key in existingSecret.keys.%s." $field $field) }}
{{- end }}
{{- end }}
{{- $declared := false }}
{{- range $field, $key := $v.existingSecret.keys }}
{{- if $key }}{{ $declared = true }}{{ end }}
{{- end }}
{{- if not $declared }}
{{- fail "gatehouse: existingSecret.name is set but existingSecret.keys names no key, so the gateway would get none of its values; name the key of each value the Secret holds." }}
{{- end }}
{{- end }}
{{- if $v.secrets.credentials }}
{{- $parsed := $v.secrets.credentials | fromJson }}
{{- if or (hasKey $parsed "Error") (not (kindIs "map" $parsed)) }}
{{- fail "gatehouse: secrets.credentials must be the OAuth credentials as a JSON object (e.g. --set-file secrets.credentials=oauth_creds.json)." }}
{{- end }}
{{- end }}
{{- if and $v.serviceAccountKey.secretName (include "gatehouse.credentialsAsFile" .) }}
{{- fail "gatehouse: serviceAccountKey.secretName and credentials.mountAs=file both set GOOGLE_APPLICATION_CREDENTIALS; the Vertex AI key file and the Code Assist credentials file are for different backends, so keep one." }}
{{- end }}
{{- if and $v.credentialsDir.secretName (include "gatehouse.secretKey" (dict "root" . "field" "credentials")) }}
{{- fail "gatehouse: credentialsDir.secretName and the OAuth credentials (secrets.credentials or existingSecret.keys.credentials) are both set; the gateway would use only the directory (GEMINI_CREDENTIALS_DIR), so keep one (a single file can go in the directory's Secret)." }}
{{- end }}
{{- if $v.credentialsDir.secretName }}
{{- $dir := $v.credentialsDir.mountPath | trimSuffix "/" }}
{{- if or (eq $dir ($v.credentials.mountPath | trimSuffix "/")) (eq $dir ($v.serviceAccountKey.mountPath | trimSuffix "/")) }}
{{- fail "gatehouse: credentialsDir.mountPath must differ from credentials.mountPath and serviceAccountKey.mountPath." }}
{{- end }}
{{- end }}
{{- if and $v.persistence.enabled (include "gatehouse.usesMongodb" .) }}
{{- fail "gatehouse: persistence.enabled keeps the embedded store on a volume, but MongoDB is configured so the embedded store is not used; set persistence.enabled=false." }}
{{- end }}
{{- if eq (int $v.metrics.port) (int (include "gatehouse.containerPort" .)) }}
{{- fail (printf "gatehouse: metrics.port must differ from the gateway port %s (0 serves /metrics on the gateway port)." (include "gatehouse.containerPort" .)) }}
{{- end }}
{{- if and $v.autoscaling.enabled (gt (int $v.autoscaling.minReplicas) (int $v.autoscaling.maxReplicas)) }}
{{- fail "gatehouse: autoscaling.minReplicas is larger than autoscaling.maxReplicas." }}
{{- end }}
{{- if $v.podDisruptionBudget.enabled }}
{{- $min := toString $v.podDisruptionBudget.minAvailable }}
{{- $max := toString $v.podDisruptionBudget.maxUnavailable }}
{{- if eq (empty $min) (empty $max) }}
{{- fail "gatehouse: podDisruptionBudget needs exactly one of minAvailable and maxUnavailable (set the other to \"\")." }}
{{- end }}
{{- end }}
{{- end }}

{{/* A hardened container security context, shared by the gateway and the test pod. */}}
{{- define "gatehouse.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "gatehouse.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
fsGroup: {{ .Values.securityContext.fsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* The container's env list: one optional secretKeyRef per value a Secret holds, then extraEnv. */}}
{{- define "gatehouse.env" -}}
{{- $multiReplica := include "gatehouse.multiReplica" . }}
{{- $secretName := include "gatehouse.secretName" . }}
{{- range $field, $entry := include "gatehouse.secretEntries" . | fromYaml }}
{{- $key := include "gatehouse.secretKey" (dict "root" $ "field" $field) }}
{{- if and $key (not (and (eq $field "credentials") (eq $.Values.credentials.mountAs "file"))) }}
- name: {{ $entry.env }}
  valueFrom:
    secretKeyRef:
      name: {{ $secretName }}
      key: {{ $key }}
      {{- /* Several pods without MONGODB_URL would each use their own embedded store: a missing key stops the pod instead. */}}
      optional: {{ not (and (eq $field "mongodbUrl") $multiReplica) }}
{{- end }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* A count stays an integer; a percentage becomes a quoted string (IntOrString). */}}
{{- define "gatehouse.intOrPercent" -}}
{{- if hasSuffix "%" . }}{{ quote . }}{{ else }}{{ . }}{{ end }}
{{- end }}

{{- define "gatehouse.testSelectorLabels" -}}
app.kubernetes.io/name: {{ include "gatehouse.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: test
{{- end }}

{{/* TRUSTED_PROXIES: config.trustedProxies when set, else the ingress controller's ranges while the chart's Ingress is enabled (behind it every client arrives from the controller's address). */}}
{{- define "gatehouse.trustedProxies" -}}
{{- if .Values.config.trustedProxies }}
{{- .Values.config.trustedProxies }}
{{- else if .Values.ingress.enabled }}
{{- .Values.ingress.trustedProxies }}
{{- end }}
{{- end }}
