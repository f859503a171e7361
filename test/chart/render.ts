// Shared by the chart tests: render the chart with a value set, parse the objects, and check each one
// against the Kubernetes schemas. Not a test file itself (tap runs only *.test.ts).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse, parseAllDocuments } from 'yaml'
import { runHelm } from '../../scripts/helm.ts'
import type { HelmResult } from '../../scripts/helm.ts'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const CHART = path.join(ROOT, 'charts', 'gatehouse')
export const RELEASE = 'gh'
export const NAMESPACE = 'gatehouse-test'
export const FULLNAME = 'gh-gatehouse'

export const chartMeta = parse(readFileSync(path.join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string, version: string }
export const defaultValues = parse(readFileSync(path.join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>

// A rendered Kubernetes object; tests reach into it freely.
export type K8sObject = { apiVersion: string, kind: string, metadata: { name: string, labels?: Record<string, string>, annotations?: Record<string, string> }, [key: string]: any }

/** Runs a helm sub-command against the chart with the value set written to a temporary values file. */
export async function helmWithValues (args: string[], values: object = {}): Promise<HelmResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-chart-'))
  try {
    const file = path.join(dir, 'values.json')
    writeFileSync(file, JSON.stringify(values))
    return await runHelm([...args, '--values', file])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** `helm template` with the value set (and extra helm arguments); resolves with the helm result (non-zero code on refusal). */
export function template (values: object = {}, extraArgs: string[] = []): Promise<HelmResult> {
  return helmWithValues(['template', RELEASE, CHART, '--namespace', NAMESPACE, ...extraArgs], values)
}

/** Renders and parses every object; throws with helm's message when the chart refuses the values. */
export async function render (values: object = {}, extraArgs: string[] = []): Promise<K8sObject[]> {
  const result = await template(values, extraArgs)
  if (result.code !== 0) throw new Error(`helm template failed (${result.code}): ${result.stderr}`)
  return parseAllDocuments(result.stdout)
    .map(doc => {
      if (doc.errors.length > 0) throw new Error(`unparseable YAML from helm: ${doc.errors[0].message}`)
      return doc.toJS() as K8sObject | null
    })
    .filter((o): o is K8sObject => o !== null)
}

/** The one object of this kind (and name, when given); throws when absent or ambiguous. */
export function only (objects: K8sObject[], kind: string, name?: string): K8sObject {
  const found = objects.filter(o => o.kind === kind && (name === undefined || o.metadata.name === name))
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`)
  return found[0]
}

/** Validates an object against the Kubernetes OpenAPI schema via kubernetes-models (throws on a violation). */
export async function validateWithKubernetesModels (object: K8sObject): Promise<void> {
  const slash = object.apiVersion.indexOf('/')
  const specifier = slash < 0
    ? `kubernetes-models/${object.apiVersion}/${object.kind}`
    : `kubernetes-models/${object.apiVersion.slice(0, slash)}/${object.apiVersion.slice(slash + 1)}/${object.kind}`
  const mod = await import(specifier)
  const Model = mod[object.kind]
  if (typeof Model !== 'function') throw new Error(`kubernetes-models has no ${object.apiVersion} ${object.kind}`)
  new Model(object).validate()
}

// Durations as the Prometheus Operator CRD accepts them (its `Duration` pattern).
const PROM_DURATION = /^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/

function unknownKeys (value: Record<string, unknown>, allowed: string[]): string[] {
  return Object.keys(value).filter(k => !allowed.includes(k))
}

/**
 * kubernetes-models ships no Prometheus Operator CRDs (and @kubernetes-models/prometheus-operator is not
 * installed), so a ServiceMonitor is checked by hand against the fields of monitoring.coreos.com/v1 it uses.
 * Returns the problems found (empty when the shape is right).
 */
export function serviceMonitorProblems (sm: K8sObject): string[] {
  const problems: string[] = []
  if (sm.apiVersion !== 'monitoring.coreos.com/v1') problems.push(`apiVersion ${sm.apiVersion}`)
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(sm.metadata?.name ?? '')) problems.push('metadata.name is not a DNS-1123 name')
  const spec = sm.spec
  if (spec === null || typeof spec !== 'object') return [...problems, 'spec missing']
  problems.push(...unknownKeys(spec, ['selector', 'namespaceSelector', 'endpoints', 'jobLabel']).map(k => `unknown spec.${k}`))
  const labels = spec.selector?.matchLabels
  if (labels === null || typeof labels !== 'object' || Object.keys(labels).length === 0) problems.push('spec.selector.matchLabels missing')
  else if (!Object.values(labels).every(v => typeof v === 'string')) problems.push('spec.selector.matchLabels values must be strings')
  if (spec.namespaceSelector !== undefined) {
    const ns = spec.namespaceSelector
    problems.push(...unknownKeys(ns, ['any', 'matchNames']).map(k => `unknown spec.namespaceSelector.${k}`))
    if (ns.matchNames !== undefined && !(Array.isArray(ns.matchNames) && ns.matchNames.every((n: unknown) => typeof n === 'string'))) problems.push('namespaceSelector.matchNames must be strings')
  }
  if (!Array.isArray(spec.endpoints) || spec.endpoints.length === 0) return [...problems, 'spec.endpoints missing']
  for (const [i, ep] of spec.endpoints.entries()) {
    problems.push(...unknownKeys(ep, ['port', 'path', 'scheme', 'interval', 'scrapeTimeout']).map(k => `unknown endpoints[${i}].${k}`))
    if (typeof ep.port !== 'string' || ep.port === '') problems.push(`endpoints[${i}].port must be a port name`)
    if (typeof ep.path !== 'string' || !ep.path.startsWith('/')) problems.push(`endpoints[${i}].path must start with /`)
    if (ep.scheme !== undefined && !['http', 'https'].includes(ep.scheme)) problems.push(`endpoints[${i}].scheme ${ep.scheme}`)
    for (const field of ['interval', 'scrapeTimeout']) {
      if (ep[field] !== undefined && !(typeof ep[field] === 'string' && PROM_DURATION.test(ep[field]))) problems.push(`endpoints[${i}].${field} is not a duration`)
    }
  }
  return problems
}

/** Pod-spec containers and init containers of a Deployment or Pod. */
export function podSpecOf (object: K8sObject): any {
  return object.kind === 'Pod' ? object.spec : object.spec.template.spec
}

/** True when every selector label is on the given labels. */
export function selects (selector: Record<string, string>, labels: Record<string, string> = {}): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v)
}
