// No container engine runs on the build machines, so the image is checked by reading its Dockerfile.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { ROOT } from './render.ts'

interface Instruction { op: string, args: string }
interface Stage { from: string, name: string, body: Instruction[] }

function instructions (text: string): Instruction[] {
  return text
    .replace(/\\\n/g, ' ') // line continuations
    .split('\n')
    .map(line => line.trim())
    .filter(line => line !== '' && !line.startsWith('#'))
    .map(line => {
      const space = line.search(/\s/)
      return { op: line.slice(0, space).toUpperCase(), args: line.slice(space + 1).trim() }
    })
}

function stages (all: Instruction[]): { args: Record<string, string>, stages: Stage[] } {
  const args: Record<string, string> = {}
  const out: Stage[] = []
  for (const ins of all) {
    if (ins.op === 'ARG' && out.length === 0) {
      const [k, v = ''] = ins.args.split('=')
      args[k] = v
    } else if (ins.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args)!
      const from = m[1].replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => args[a ?? b] ?? '')
      out.push({ from, name: m[2] ?? String(out.length), body: [] })
    } else if (out.length > 0) {
      out.at(-1)!.body.push(ins)
    }
  }
  return { args, stages: out }
}

const dockerfile = instructions(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))
const { stages: all } = stages(dockerfile)
const final = all.at(-1)!
const ops = (stage: Stage, op: string) => stage.body.filter(i => i.op === op).map(i => i.args)

t.test('the image is multi-stage on the Node 24 slim image', async t => {
  t.ok(all.length >= 2, `${all.length} stages`)
  for (const stage of all) t.match(stage.from, /^node:24(\.[\d.]+)?-(bookworm-)?slim$/, `stage ${stage.name} is on node:24 slim`)
})

t.test('the build stage runs npm ci and the build', async t => {
  const build = all.find(s => ops(s, 'RUN').some(r => r.includes('npm run build')))
  t.ok(build, 'a stage runs npm run build')
  const runs = ops(build!, 'RUN')
  t.ok(runs.findIndex(r => /\bnpm ci\b/.test(r) && !r.includes('--omit=dev')) < runs.findIndex(r => r.includes('npm run build')), 'full npm ci before the build')
})

t.test('the runtime stage carries production dependencies only, plus the compiled dist', async t => {
  const deps = all.find(s => ops(s, 'RUN').some(r => /\bnpm ci\b.*--omit=dev/.test(r)))
  t.ok(deps, 'a stage runs npm ci --omit=dev')
  const copies = ops(final, 'COPY')
  t.ok(copies.some(c => c.startsWith(`--from=${deps!.name} `) && c.includes('node_modules')), 'node_modules comes from the --omit=dev stage')
  t.ok(copies.some(c => /^--from=\S+ \/app\/dist\b/.test(c)), 'dist comes from the build stage')
  t.notOk(ops(final, 'RUN').some(r => /\bnpm (ci|install)\b/.test(r)), 'nothing is installed in the runtime stage')
  t.ok(ops(final, 'ENV').some(e => /NODE_ENV[= ]production/.test(e)), 'NODE_ENV=production')
})

t.test('the gateway runs as a non-root user', async t => {
  const users = ops(final, 'USER')
  t.ok(users.length > 0, 'USER is set')
  const user = users.at(-1)!.split(':')[0]
  t.notOk(['root', '0'].includes(user), `runs as ${user}`)
})

t.test('port 8888 is exposed and the health check calls /livez with node', async t => {
  t.ok(ops(final, 'EXPOSE').some(e => e.split(/\s+/).includes('8888')))
  const health = ops(final, 'HEALTHCHECK').at(-1) ?? ''
  t.match(health, /CMD \["node", "-e", .*\/livez/)
  t.notMatch(health, /curl|wget/, 'the slim image has no curl')
})

t.test('CMD runs node itself in exec form, with the tracing entry imported first', async t => {
  t.equal(ops(final, 'ENTRYPOINT').length, 0, 'no entrypoint wraps node')
  const cmd = ops(final, 'CMD').at(-1) ?? ''
  let argv: string[] = []
  t.doesNotThrow(() => { argv = JSON.parse(cmd) }, 'exec form (a JSON array), so node is PID 1 and receives SIGTERM')
  t.equal(argv[0], 'node', 'not npm, which does not forward SIGTERM')
  // The same start-up as `npm start`, on the compiled files.
  const start: string = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start
  const words = start.split(/\s+/)
  // Variables the start script sets before `node` are the image's ENV instead.
  const settings = words.filter((w, i) => i < words.indexOf('node') && /^[A-Z_]+=/.test(w))
  const compiled = words.slice(settings.length).map(a => a.replace(/^(\.\/)?(gateway\/\S+)\.ts$/, (_, dot, file) => `${dot ?? ''}dist/${file}.js`))
  t.same(argv, compiled, `CMD matches npm start (${start}) compiled to dist/`)
  const env = ops(final, 'ENV').join(' ')
  for (const setting of settings) t.ok(env.split(/\s+/).includes(setting), `the image sets ${setting} as npm start does`)
})

t.test('.dockerignore keeps local artefacts out of the build context but not the sources', async t => {
  const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map(l => l.trim()).filter(l => l && !l.startsWith('#'))
  for (const entry of ['node_modules', '.git', '.tools', 'dist']) t.ok(ignored.includes(entry), `${entry} is ignored`)
  const sources = all.flatMap(s => ops(s, 'COPY')).filter(c => !c.startsWith('--from')).flatMap(c => c.split(/\s+/).slice(0, -1))
  for (const source of sources) t.notOk(ignored.includes(source.replace(/\/$/, '')), `${source} reaches the build`)
})
