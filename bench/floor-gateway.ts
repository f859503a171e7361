// The built gateway as `npm start` runs it, plus one route (GET /floor) whose handler answers validate's JSON at
// once: what the gateway's own per-request layer costs (the host adapter, request id, log line, metrics, error
// mapping) with no handler work at all. bench/run.ts measures it beside the validate row, against the same bare
// Hapi route: validate, which also checks its input and looks its session up, cannot keep more of that rate.
import { join } from 'node:path'
import { root } from './processes.ts'
import type * as ServerModule from '../gateway/server.ts'
import type * as ConfigModule from '../gateway/config.ts'
import type { Route } from '../lib/http/contract.ts'

const { createGateway } = await import(join(root, 'dist/gateway/server.js')) as typeof ServerModule
const { loadConfig } = await import(join(root, 'dist/gateway/config.js')) as typeof ConfigModule
const answer = { access_token: 'x'.repeat(43), token_type: 'bearer' }
const floor: Route = {
  method: 'GET',
  path: '/floor',
  maxBytes: 0,
  handler: async () => ({ status: 200, headers: { 'cache-control': 'no-store' }, body: answer }),
  errorResponse: () => ({ status: 500 }),
}
const gateway = await createGateway(loadConfig(process.env), { extraRoutes: [{ scope: '', routes: [floor], errorResponse: floor.errorResponse }] })
await gateway.start()
process.once('SIGTERM', () => { void gateway.stop().then(() => process.exit(0)) })
