// Fetches http(s) image URLs that chat clients send in `image_url` parts, so the upstream gets the
// bytes inline. Bounded in time and size; every failure (closed port, slow server, non-image,
// too large, an internal address) becomes a 400 IMAGE_FETCH_FAILED well within the time limit.
// Whatever keeps the gateway from getting an HTTP answer (a refused address or port, a name that does
// not resolve, a refused, reset or timed-out connection) gets one and the same message: anything more
// would tell a client which internal names exist and which ports answer. The reason goes to the log.
import type { Agent, Dispatcher } from 'undici'
import { undici } from '../../load-package.ts'
import { ConfigurationError, fail } from '../../errors.ts'
import { isPort } from '../../option-rules.ts'
import type { Logger } from '../../logger.ts'
import { blockedRange, guardedConnector, isAddressNotAllowed } from './fetch-guard.ts'
import type { AddressClassifier } from './fetch-guard.ts'
import { imageTypeOf } from './bytes.ts'

export interface ImageFetchOptions {
  /** Largest image accepted, in bytes. Default 20 MiB. */
  maxBytes?: number
  /** Time allowed for the whole fetch (connect, headers and body), in ms. Default 15000. */
  timeoutMs?: number
  /** Redirects followed. Default 3. */
  maxRedirects?: number
  /** Most image URLs fetched for one request (more is a 400). Default 16. */
  maxPerRequest?: number
  /**
   * Also fetch from loopback, private (RFC 1918, fc00::/7), link-local, CGNAT and other internal
   * addresses. Default false: whoever holds the proxy password chooses the URL, and the gateway
   * usually sits next to cloud metadata (169.254.169.254), cluster services and admin ports on
   * localhost that must not be reachable through it (SSRF). Turn on only when images come from
   * a network you trust.
   */
  allowPrivateNetworks?: boolean
  /** Ports image URLs may use, on every redirect hop (others are refused before connecting); 'any' for all. Default [80, 443]. */
  allowedPorts?: readonly number[] | 'any'
}

const DEFAULT_IMAGE_FETCH_PORTS: readonly number[] = Object.freeze([80, 443])

export interface FetchedImage {
  mimeType: string
  bytes: Buffer
}

/** What the images of one request may still take, in bytes, shared by its concurrent fetches. */
export interface ImageAllowance {
  remaining: number
  /** The allowance it started with, for the error message. */
  readonly total: number
}

export interface ImageFetcher {
  readonly maxPerRequest: number
  /** Largest single image, in bytes. */
  readonly maxBytes: number
  /** Fetches one image; with an allowance, its bytes are counted against it as they arrive (400 past it). */
  fetch (url: string, signal?: AbortSignal, allowance?: ImageAllowance): Promise<FetchedImage>
  close (): Promise<void>
}

function describe (url: URL): string {
  // Signed URLs carry secrets in the query: name only the host and path.
  return `${url.protocol}//${url.host}${url.pathname}`
}

function reason (err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `no complete answer within ${timeoutMs} ms`
  const code = (err as { code?: string })?.code
  if (isAddressNotAllowed(err)) return err.message
  if (code === 'ECONNREFUSED') return 'connection refused'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found'
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connect timed out'
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') return 'connection closed by the server'
  if (code === 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH' || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') return 'incomplete body'
  if ((err as Error)?.name === 'AbortError') return 'request aborted'
  return (err as Error)?.message ?? String(err)
}

function allowedPortSet (ports: readonly number[] | 'any'): ReadonlySet<number> | 'any' {
  if (ports === 'any') return ports
  if (!Array.isArray(ports) || ports.length === 0 || !ports.every(isPort)) {
    throw new ConfigurationError('imageFetch.allowedPorts', `createProxy: imageFetch.allowedPorts must be 'any' or a non-empty list of ports 1-65535 (got ${JSON.stringify(ports)})`)
  }
  return new Set(ports)
}

/** `refused` decides which addresses are off limits (default: internal ranges, see fetch-guard.ts). */
export function createImageFetcher (options: ImageFetchOptions = {}, refused: AddressClassifier = blockedRange, logger?: Logger): ImageFetcher {
  const maxBytes = options.maxBytes ?? 20 * 1024 * 1024
  const timeoutMs = options.timeoutMs ?? 15000
  const ports = allowedPortSet(options.allowedPorts ?? DEFAULT_IMAGE_FETCH_PORTS)
  // Made on the first fetch, so a proxy that never fetches an image never loads undici (lib/load-package.ts).
  let agent: Agent | undefined
  let dispatcher: Dispatcher | undefined
  const dispatcherOf = (): Dispatcher => {
    if (dispatcher !== undefined) return dispatcher
    const { Agent, interceptors } = undici()
    const connect = guardedConnector(timeoutMs, options.allowPrivateNetworks === true ? false : refused, ports)
    agent = new Agent({ connect, headersTimeout: timeoutMs, bodyTimeout: timeoutMs })
    dispatcher = agent.compose(interceptors.redirect({ maxRedirections: options.maxRedirects ?? 3 }))
    return dispatcher
  }

  return {
    maxPerRequest: options.maxPerRequest ?? 16,
    maxBytes,
    async fetch (rawUrl, signal, allowance) {
      let url: URL
      try {
        url = new URL(rawUrl)
      } catch {
        throw fail('IMAGE_FETCH_FAILED', 'The image URL is not a valid URL')
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw fail('IMAGE_FETCH_FAILED', `Image URLs must be http(s) or data: URLs, not ${url.protocol}`)
      }
      const where = describe(url)
      const timeout = AbortSignal.timeout(timeoutMs)
      const combined = signal === undefined ? timeout : AbortSignal.any([timeout, signal])
      const failed = (why: string): Error => fail('IMAGE_FETCH_FAILED', `Could not fetch the image URL ${where}: ${why}`)
      // What the server behind the URL answered is not told (docs/model-proxy.md, "Image URLs"): a 404 or an HTML page
      // reads like a closed port, so image URLs probe nothing; the reason is logged.
      const unanswered = (why: string): Error => {
        logger?.info({ url: where, reason: why }, 'Image URL could not be fetched')
        return fail('IMAGE_FETCH_FAILED', `Could not fetch the image URL ${where}`)
      }
      try {
        const res = await undici().request(url, {
          dispatcher: dispatcherOf(),
          method: 'GET',
          signal: combined,
          headers: { accept: 'image/*', 'accept-encoding': 'identity', 'user-agent': 'gatehouse-image-fetch' },
        })
        const type = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
        const declaredLength = Number(res.headers['content-length'])
        // Destroying an unread body emits 'error': without a listener that would crash the process.
        res.body.on('error', () => {})
        const refuse = async (why: string, uniform = false): Promise<never> => {
          res.body.destroy()
          throw uniform ? unanswered(why) : failed(why)
        }
        if (res.statusCode < 200 || res.statusCode > 299) await refuse(`the server answered ${res.statusCode}`, true)
        if (!type.startsWith('image/')) await refuse(`content type "${type || 'none'}" is not an image`, true)
        if (Number.isFinite(declaredLength) && declaredLength > maxBytes) await refuse(`larger than ${maxBytes} bytes`)
        const overAllowance = `the images of this request total more than ${allowance?.total ?? 0} bytes`
        if (allowance !== undefined && Number.isFinite(declaredLength) && declaredLength > allowance.remaining) await refuse(overAllowance)
        const chunks: Buffer[] = []
        let size = 0
        for await (const chunk of res.body) {
          size += (chunk as Buffer).length
          if (size > maxBytes) await refuse(`larger than ${maxBytes} bytes`)
          if (allowance !== undefined) {
            allowance.remaining -= (chunk as Buffer).length
            if (allowance.remaining < 0) await refuse(overAllowance)
          }
          chunks.push(chunk as Buffer)
        }
        const bytes = Buffer.concat(chunks)
        if (bytes.length === 0) throw unanswered('the image is empty')
        // Servers mislabel images often: the bytes decide, as for data URLs.
        const image = imageTypeOf(type, bytes)
        if (!('mimeType' in image)) throw unanswered(image.error)
        return { mimeType: image.mimeType, bytes }
      } catch (err) {
        if ((err as { code?: string })?.code === 'IMAGE_FETCH_FAILED') throw err
        if (signal?.aborted === true && !timeout.aborted) throw failed('request aborted')
        const why = reason(err, timeout.aborted, timeoutMs)
        if (isAddressNotAllowed(err)) logger?.warn({ url: where, reason: why }, 'Image URL refused')
        else logger?.info({ url: where, reason: why }, 'Image URL could not be fetched')
        throw fail('IMAGE_FETCH_FAILED', `Could not fetch the image URL ${where}`)
      }
    },
    async close () {
      await agent?.close()
    },
  }
}
