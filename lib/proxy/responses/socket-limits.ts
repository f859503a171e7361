// The Responses WebSocket transport's limits (createProxy's responses.websocket; docs/responses.md, "WebSocket
// transport"): how long a socket may sit idle and live at all, and how many one key may hold open at once.
import { ConfigurationError, fail } from '../../errors.ts'
import type { ProxyCaller } from '../access/caller.ts'

export interface SocketLimits {
  /** Seconds a socket may wait for its next response.create with none running; then it is closed (1000). */
  idleTimeoutSeconds: number
  /** Seconds a socket may stay open; then it is closed (1000) as soon as no response runs on it. */
  maxLifetimeSeconds: number
  /** Sockets one key may hold open at once in this process; past it the upgrade is a 426 (TOO_MANY_SOCKETS). */
  maxSocketsPerKey: number
}

/** The defaults: 15 minutes idle, and OpenAI's own 60-minute lifetime of a Responses socket; 32 sockets a key. */
export const DEFAULT_SOCKET_LIMITS: Readonly<SocketLimits> = Object.freeze({ idleTimeoutSeconds: 900, maxLifetimeSeconds: 3600, maxSocketsPerKey: 32 })

/** responses.websocket, checked: each field a positive integer, unknown fields refused. */
export function socketLimits (options: unknown): SocketLimits {
  if (options === undefined) return { ...DEFAULT_SOCKET_LIMITS }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ConfigurationError('responses.websocket', 'createProxy: responses.websocket must be an object')
  }
  const limits = { ...DEFAULT_SOCKET_LIMITS }
  for (const [name, value] of Object.entries(options)) {
    const option = `responses.websocket.${name}`
    if (!(name in DEFAULT_SOCKET_LIMITS)) throw new ConfigurationError(option, `createProxy: ${option} is not an option (known: ${Object.keys(DEFAULT_SOCKET_LIMITS).join(', ')})`)
    if (value === undefined) continue
    if (!Number.isSafeInteger(value) || (value as number) < 1) throw new ConfigurationError(option, `createProxy: ${option} must be a positive integer (got ${String(value)})`)
    limits[name as keyof SocketLimits] = value as number
  }
  return limits
}

/** The open sockets of each key in this process, against maxSocketsPerKey; the operator password is not capped. */
export interface SocketCounts {
  /** Throws TOO_MANY_SOCKETS when the caller's key holds as many as allowed. */
  check: (caller: ProxyCaller) => void
  /** Counts a socket for the caller (even past the cap: a race of two upgrades), and answers its release. */
  hold: (caller: ProxyCaller) => () => void
}

export function socketCounts (max: number): SocketCounts {
  const open = new Map<string, number>()
  const keyOf = (caller: ProxyCaller): string | undefined => caller.kind === 'key' ? caller.keyId : undefined
  return {
    check (caller) {
      const key = keyOf(caller)
      if (key !== undefined && (open.get(key) ?? 0) >= max) {
        // 426, not 429: Codex answers a 426 handshake by going on over POST, a 429 by retrying until it gives up.
        throw fail('TOO_MANY_SOCKETS', `This key holds ${max} open WebSockets on /v1/responses, as many as allowed; POST the response, or close a socket first`)
      }
    },
    hold (caller) {
      const key = keyOf(caller)
      if (key === undefined) return () => {}
      open.set(key, (open.get(key) ?? 0) + 1)
      let released = false
      return () => {
        if (released) return
        released = true
        const left = (open.get(key) ?? 1) - 1
        if (left <= 0) open.delete(key)
        else open.set(key, left)
      }
    },
  }
}

/** The live sockets of one proxy, for a host's shutdown (Proxy.closeSockets). */
export interface SocketDrain {
  /** Adds a socket's drain (close it once no response runs), answering its removal. */
  add: (drain: () => Promise<void>) => () => void
  /** Drains every live socket, and every one added from then on; resolves once those live now are closed. */
  all: () => Promise<void>
}

export function socketDrain (): SocketDrain {
  const live = new Set<() => Promise<void>>()
  let draining = false
  return {
    add (drain) {
      live.add(drain)
      // A socket upgraded while the host shuts down is drained at once.
      if (draining) void drain()
      return () => { live.delete(drain) }
    },
    async all () {
      draining = true
      await Promise.all([...live].map(async drain => await drain()))
    },
  }
}
