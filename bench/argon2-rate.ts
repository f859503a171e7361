// The login baseline: raw @node-rs/argon2 verifications per second with the gateway's parameters,
// at the same concurrency as the login load. Input: {connections, durationMs} as argv[2].
import { hash, verify } from '@node-rs/argon2'
import { DEFAULT_ARGON2 } from '../lib/auth/options.ts'

const { connections, durationMs } = JSON.parse(process.argv[2]) as { connections: number, durationMs: number }
const params = { algorithm: 2 as const, ...DEFAULT_ARGON2 }
const stored = await hash('bench password 1', params)
let count = 0
let stop = false
const began = performance.now()
setTimeout(() => { stop = true }, durationMs)
await Promise.all(Array.from({ length: connections }, async () => {
  while (!stop) {
    await verify(stored, 'bench password 1')
    count++
  }
}))
process.stdout.write(JSON.stringify({ rps: count / ((performance.now() - began) / 1000) }) + '\n')
