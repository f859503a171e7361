// A bare HTTP client for the accounts tests. node:http rather than fetch, because fetch always sends a
// user-agent and a content-type, and the tests need to leave them out or get them wrong on purpose.
import http from 'node:http'

export interface Reply {
  status: number
  headers: http.IncomingHttpHeaders
  /** The body parsed as JSON, or the raw text when it is not JSON. */
  body: any
  text: string
}

export interface RequestOptions {
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | undefined>
  /** Headers; `user-agent` is not sent unless given here. */
  headers?: Record<string, string>
  /** A JSON value to send (content-type application/json unless headers say otherwise). */
  json?: unknown
  /** Raw bytes or text to send as is. */
  raw?: string | Buffer
  /** Send the body with chunked transfer-encoding (no content-length), in 16 KiB pieces. */
  chunked?: boolean
}

export async function request (baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
  const url = new URL(baseUrl + path)
  for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.append(k, String(v))
  const headers: Record<string, string> = {}
  let payload: Buffer | undefined
  if (options.json !== undefined) {
    payload = Buffer.from(JSON.stringify(options.json))
    headers['content-type'] = 'application/json'
  } else if (options.raw !== undefined) {
    payload = Buffer.from(options.raw)
  }
  if (payload !== undefined && options.chunked !== true) headers['content-length'] = String(payload.length)
  Object.assign(headers, options.headers)
  return await new Promise<Reply>((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let body: unknown = text
        try { body = JSON.parse(text) } catch {}
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text })
      })
    })
    req.on('error', reject)
    if (options.chunked === true && payload !== undefined) {
      for (let i = 0; i < payload.length; i += 16384) req.write(payload.subarray(i, i + 16384))
      req.end()
    } else {
      req.end(payload)
    }
  })
}

/** Calls bound to one base URL (`http://host:port/v1/api`) and one device. */
export interface AuthClient {
  base: string
  call (method: string, path: string, options?: RequestOptions): Promise<Reply>
  signup (username: string, password: string, email?: string): Promise<Reply>
  login (username: string, password: string, device?: string): Promise<Reply>
  validate (userId: string, token: string, device?: string): Promise<Reply>
  logout (userId: string, token: string): Promise<Reply>
}

export const DEVICE = 'gatehouse-tests/1.0 (device A)'

export function authClient (base: string): AuthClient {
  const call = (method: string, path: string, options?: RequestOptions): Promise<Reply> => request(base, method, path, options)
  return {
    base,
    call,
    signup: (username, password, email) => call('POST', '/auth/signup', { json: email === undefined ? { username, password } : { username, password, email } }),
    login: (username, password, device = DEVICE) => call('POST', '/auth/login', { json: { username, password }, headers: { 'user-agent': device } }),
    validate: (userId, token, device = DEVICE) => call('GET', '/auth/validate', { query: { user_id: userId, token }, headers: { 'user-agent': device } }),
    logout: (userId, token) => call('POST', '/auth/logout', { query: { user_id: userId, token } }),
  }
}
