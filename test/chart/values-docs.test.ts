import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { CHART, defaultValues } from './render.ts'

const schema = JSON.parse(readFileSync(path.join(CHART, 'values.schema.json'), 'utf8'))
const readme = readFileSync(path.join(CHART, 'README.md'), 'utf8')

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

// Dotted paths of the values; an empty map or a list is a leaf (its content is free-form Kubernetes data).
function leafPaths (value: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(value).flatMap(([key, v]) => {
    const p = prefix + key
    return isMap(v) && Object.keys(v).length > 0 ? leafPaths(v, p + '.') : [p]
  })
}

function schemaAt (dotted: string): any {
  let node = schema
  for (const key of dotted.split('.')) node = node?.properties?.[key]
  return node
}

// Every schema object that names its properties, with its path.
function strictObjects (node: any, prefix = ''): Array<[string, any]> {
  if (!isMap(node?.properties)) return []
  return [[prefix || '(root)', node], ...Object.entries(node.properties).flatMap(([k, child]) => strictObjects(child, prefix ? `${prefix}.${k}` : k))]
}

t.test('every value in values.yaml is described by values.schema.json', async t => {
  for (const p of leafPaths(defaultValues)) {
    const node = schemaAt(p)
    t.ok(node, `${p} has a schema entry`)
    t.ok(node?.type || node?.anyOf, `${p} has a type`)
  }
})

t.test('the schema is strict: every object it describes rejects unknown keys and needs every key', async t => {
  for (const [p, node] of strictObjects(schema)) {
    // `resources` may drop requests or limits; its request/limit maps are closed too.
    if (p === 'resources') continue
    if (p.startsWith('resources.')) {
      t.equal(node.additionalProperties, false, `${p} is closed`)
      continue
    }
    t.equal(node.additionalProperties, false, `${p} rejects unknown keys`)
    if (p.startsWith('networkPolicy.egress.ports')) continue
    t.same([...(node.required ?? [])].sort(), Object.keys(node.properties).sort(), `${p} requires every key`)
  }
})

t.test('the schema describes no value that values.yaml lacks', async t => {
  const walk = (node: any, value: unknown, prefix: string): void => {
    if (!isMap(node?.properties) || !isMap(value) || prefix === 'resources') return
    for (const [key, child] of Object.entries(node.properties)) {
      const p = prefix ? `${prefix}.${key}` : key
      t.ok(key in value, `${p} is in values.yaml`)
      walk(child, value[key], p)
    }
  }
  walk(schema, defaultValues, '')
})

t.test('the chart README lists every value in its table', async t => {
  // `resources` is documented as one value (a Kubernetes ResourceRequirements).
  const documentedWhole = ['resources']
  const paths = leafPaths(defaultValues).map(p => documentedWhole.find(w => p.startsWith(w + '.')) ?? p)
  for (const p of new Set(paths)) t.ok(readme.includes('| `' + p + '` |'), `README has a row for ${p}`)
})
