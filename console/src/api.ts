// Calls to the console's API: URLs relative to the page (so any path prefix holds), the console header on every call,
// the session in an HttpOnly cookie the browser sends by itself (nothing is kept in storage).
import { plainWords } from './words.ts'

export class ApiError extends Error {
  readonly status: number
  /** The API's own text; `message` is it in plain words (console/src/words.ts). */
  readonly detail: string
  constructor (status: number, detail: string, retryAfter?: number) {
    super(plainWords(detail, retryAfter))
    this.status = status
    this.detail = detail
  }
}

export const apiUrl = (path: string): string => new URL('api/' + path, document.baseURI).href

export async function api<T = any> (method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'x-gatehouse-console': '1', accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  let res: Response
  try {
    res = await fetch(apiUrl(path), { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' })
  } catch {
    throw new ApiError(0, 'The gateway could not be reached. Check your connection and try again.')
  }
  const text = await res.text()
  let parsed: any
  try { parsed = text === '' ? undefined : JSON.parse(text) } catch { parsed = undefined }
  const retryAfter = res.headers.get('retry-after')
  if (!res.ok) throw new ApiError(res.status, typeof parsed?.detail === 'string' ? parsed.detail : `The gateway answered ${res.status} ${res.statusText}`, retryAfter === null ? undefined : Number(retryAfter))
  return parsed as T
}

/** True for the refusal that asks for the current password (recent authentication). */
export const needsPassword = (err: unknown): boolean => err instanceof ApiError && err.status === 401 && /current password|current_password/.test(err.detail) && !wrongPassword(err)
/** True for the refusal of a wrong current password (the re-auth prompt's own error). */
export const wrongPassword = (err: unknown): boolean => err instanceof ApiError && err.status === 401 && /is not the current password/.test(err.detail)

export const fmt = new Intl.NumberFormat('en')
/** US dollars as the console shows spend and budgets: at least cents, at most micro-dollars. */
export const usd = new Intl.NumberFormat('en', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 })
/** A key's spend this UTC month (micro-dollars) against its own cap (dollars): "$1.20 of $5.00", or the spend alone. */
export function spendText (spentMicros: number, cap: number | null): string {
  const spent = usd.format(spentMicros / 1_000_000)
  return cap === null ? spent : `${spent} of ${usd.format(cap)}`
}
export const when = (iso: string | null | undefined): string => iso == null ? '—' : iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC').replace(/Z$/, ' UTC')
export const today = (): string => new Date().toISOString().slice(0, 10)
export const daysAgo = (n: number): string => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10)
