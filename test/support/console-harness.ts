// The accounts service and the console on one real HTTP listener (Hapi, as the gateway mounts them, or lib's
// node:http listener), for test/console: a fake clock, cheap argon2, and a client that sends what the console's
// page sends (the cookie, Sec-Fetch-Site, the console header) unless a test leaves something out.
import http from 'node:http'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import Hapi from '@hapi/hapi'
import type { AuthService, Console, ConsoleOptions, Store } from '../../lib/index.ts'
import { createAuthService, createConsole, createEmbeddedStore, createNodeListener, hapiPlugin } from '../../lib/index.ts'
import { ADMIN_PASSWORD, CHEAP_ARGON2 } from './auth-harness.ts'

export const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) test browser'

export interface ConsoleReply { status: number, headers: Record<string, string>, text: string, body: any }

export interface CallOptions {
  json?: unknown
  /** The session cookie's value; default the harness's current one (set by login). */
  cookie?: string | null
  headers?: Record<string, string | undefined>
}

export interface ConsoleHarness {
  origin: string
  store: Store
  auth: AuthService
  console: Console
  /** The cookie value the last login set (undefined before any). */
  cookie: string | undefined
  advance (seconds: number): void
  /** A console API call (path after the console path, e.g. /api/me) as the page makes it. */
  call (method: string, path: string, options?: CallOptions): Promise<ConsoleReply>
  /** Any request to the server, headers as given. */
  raw (method: string, path: string, headers?: Record<string, string>, body?: string): Promise<ConsoleReply>
  /** Signs up a user (level member unless given) and signs in to the console as them. */
  member (level?: string): Promise<{ username: string, password: string, userId: string }>
  /** Signs in to the console as the system user. */
  admin (): Promise<{ userId: string }>
  close (): Promise<void>
}

let counter = 0

/** A folder with a stand-in built console, so these tests need no build. */
export function fakeAssets (): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-console-'))
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Gatehouse</title><script type="module" src="assets/app.js"></script>')
  writeFileSync(join(dir, 'app.js'), 'document.title = "Gatehouse"')
  writeFileSync(join(dir, 'app.css'), 'body { margin: 0 }')
  return dir
}

export async function startConsoleHarness (options: { host?: 'hapi' | 'node', path?: string, reauthSeconds?: number, assetsDir?: string } & Omit<Partial<ConsoleOptions>, 'auth'> = {}): Promise<ConsoleHarness> {
  let clock = Date.now()
  const store = await createEmbeddedStore({ now: () => new Date(clock) })
  const auth = createAuthService({
    store,
    adminPassword: ADMIN_PASSWORD,
    argon2: CHEAP_ARGON2,
    now: () => new Date(clock),
    sleep: async (ms) => { clock += ms },
    signupLimits: { perAddress: 100_000 },
    reauthSeconds: options.reauthSeconds,
  })
  await auth.ensureSystemUser()
  const webConsole = createConsole({ auth, path: options.path, assetsDir: options.assetsDir ?? fakeAssets(), proxy: options.proxy, limiter: options.limiter, allowHttp: options.allowHttp })
  const tables = [auth.routeTable, webConsole.routeTable]
  let origin: string
  let stop: () => Promise<void>
  if (options.host === 'node') {
    const server = http.createServer(createNodeListener(tables))
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    stop = () => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) })
  } else {
    const server = Hapi.server({ host: '127.0.0.1', port: 0, router: { stripTrailingSlash: false } })
    await server.register({ plugin: hapiPlugin, options: { tables } })
    await server.start()
    origin = `http://127.0.0.1:${server.info.port}`
    stop = () => server.stop({ timeout: 1000 })
  }
  const base = (options.path ?? '/console').replace(/\/$/, '')

  async function raw (method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<ConsoleReply> {
    const res = await fetch(origin + path, { method, headers, body, redirect: 'manual' })
    const text = await res.text()
    let parsed: unknown
    try { parsed = JSON.parse(text) } catch { parsed = undefined }
    return { status: res.status, headers: Object.fromEntries(res.headers), text, body: parsed }
  }

  const harness: ConsoleHarness = {
    origin,
    store,
    auth,
    console: webConsole,
    cookie: undefined,
    advance (seconds) { clock += seconds * 1000 },
    async call (method, path, { json, cookie, headers = {} } = {}) {
      const sent: Record<string, string> = { 'user-agent': BROWSER, 'sec-fetch-site': 'same-origin', 'x-gatehouse-console': '1' }
      const value = cookie === undefined ? harness.cookie : cookie
      if (value !== null && value !== undefined) sent.cookie = `__Host-gatehouse-console=${value}`
      if (json !== undefined) sent['content-type'] = 'application/json'
      for (const [name, v] of Object.entries(headers)) {
        if (v === undefined) delete sent[name]
        else sent[name] = v
      }
      const reply = await raw(method, base + path, sent, json === undefined ? undefined : JSON.stringify(json))
      const set = /^__Host-gatehouse-console=([^;]*)/.exec(reply.headers['set-cookie'] ?? '')
      if (set !== null) harness.cookie = set[1] === '' ? undefined : set[1]
      return reply
    },
    raw,
    async member (level = 'member') {
      const username = `member_${process.pid}_${++counter}`
      const password = 'correct horse battery'
      const signup = await raw('POST', '/v1/api/auth/signup', { 'content-type': 'application/json' }, JSON.stringify({ username, password }))
      if (signup.status !== 201) throw new Error(`signup answered ${signup.status} ${signup.text}`)
      const user = (await store.users.findByUsernameKey(username))!
      if (level !== 'default') await store.users.update(user.id, { accessLevel: level as 'member' })
      const login = await harness.call('POST', '/api/login', { json: { username, password }, cookie: null })
      if (login.status !== 200) throw new Error(`console login answered ${login.status} ${login.text}`)
      return { username, password, userId: user.id }
    },
    async admin () {
      const login = await harness.call('POST', '/api/login', { json: { username: 'system', password: ADMIN_PASSWORD }, cookie: null })
      if (login.status !== 200) throw new Error(`console login answered ${login.status} ${login.text}`)
      return { userId: login.body.user.user_id }
    },
    async close () {
      await stop()
      await store.close()
    },
  }
  return harness
}
