// node bench/profile-summary.ts <dir> [requests] [rows]: sums the newest .cpuprofile in <dir> by where each sample
// ran, in percent of busy time (and µs per request when given how many requests the profile covers): under the
// innermost function of ours (dist/ or lib/, gateway/), else under the innermost package, else the Node or native
// function itself; socket writes (`writev` and kin, mostly the kernel's time) apart. Idle time is left out.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

interface CallFrame { functionName: string, url: string, lineNumber: number }
interface ProfileNode { id: number, callFrame: CallFrame, children?: number[] }
interface Profile { nodes: ProfileNode[], samples: number[], timeDeltas: number[] }

const [dir, requestArg, rowsArg] = process.argv.slice(2)
if (dir === undefined) {
  console.error('usage: node bench/profile-summary.ts <dir with .cpuprofile files> [requests] [rows]')
  process.exit(2)
}
const file = readdirSync(dir).filter(f => f.endsWith('.cpuprofile')).sort().at(-1)
if (file === undefined) throw new Error(`no .cpuprofile in ${dir}`)
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile
const requests = Number(requestArg ?? 0)

const byId = new Map<number, ProfileNode>()
const parent = new Map<number, number>()
for (const node of profile.nodes) {
  byId.set(node.id, node)
  for (const child of node.children ?? []) parent.set(child, node.id)
}

const OURS = /\/(dist\/)?(lib|gateway)\/[^/].*\.[jt]s$/
// Native functions that do the socket I/O (a system call each): shown apart, whoever called them.
const SOCKET_IO = /^(writev|writeBuffer|write\w*String|readv?)$/
function place (id: number): string {
  const leaf = (byId.get(id) as ProfileNode).callFrame
  if (leaf.url === '' && SOCKET_IO.test(leaf.functionName)) return `io    ${leaf.functionName}`
  let pkg = ''
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const { functionName, url, lineNumber } = (byId.get(cur) as ProfileNode).callFrame
    if (OURS.test(url) && !url.includes('node_modules')) return `ours  ${functionName || '(anonymous)'} ${url.replace(/^.*?\/((dist\/)?(lib|gateway)\/)/, '$1')}:${lineNumber + 1}`
    if (pkg === '' && url.includes('node_modules/')) pkg = `pkg   ${url.replace(/.*node_modules\/((@[^/]+\/)?[^/]+).*/, '$1')}`
  }
  if (pkg !== '') return pkg
  const { functionName, url } = (byId.get(id) as ProfileNode).callFrame
  return `node  ${functionName || '(anonymous)'} ${url.replace(/^node:/, '')}`.trimEnd()
}

const time = new Map<string, number>()
let busy = 0
profile.samples.forEach((id, i) => {
  if ((byId.get(id) as ProfileNode).callFrame.functionName === '(idle)') return
  const micros = profile.timeDeltas[i] ?? 0
  const where = place(id)
  time.set(where, (time.get(where) ?? 0) + micros)
  busy += micros
})

console.log(`${file}: busy ${(busy / 1000).toFixed(0)} ms${requests > 0 ? `, ${(busy / requests).toFixed(1)} µs per request over ${requests} requests` : ''}`)
for (const [where, micros] of [...time].sort((a, b) => b[1] - a[1]).slice(0, Number(rowsArg ?? 30))) {
  const share = `${(100 * micros / busy).toFixed(1)} %`.padStart(7)
  console.log(`${share}${requests > 0 ? `${(micros / requests).toFixed(1).padStart(8)} µs` : ''}  ${where}`)
}
