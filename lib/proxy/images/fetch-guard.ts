// Keeps image fetching off internal networks (SSRF): anyone holding the proxy password chooses
// the URL, so without this they could read cloud metadata (169.254.169.254), cluster services
// or admin ports on localhost through the gateway.
// The check runs inside the connector, on the address the socket is about to use: IP literals
// before connecting, host names in the DNS lookup the socket itself uses (so a name cannot
// resolve to a public address for a check and a private one for the connection), and the peer
// address once connected. Every redirect hop opens its connection through the same connector,
// which also refuses ports outside the allowed ones (80 and 443 by default), so image URLs cannot
// probe which ports of a host answer.
import dns from 'node:dns'
import { BlockList, isIP } from 'node:net'
import type { LookupFunction, Socket } from 'node:net'
import type { buildConnector } from 'undici'
import { undici } from '../../load-package.ts'

type Family = 'ipv4' | 'ipv6'

/** Ranges refused, most specific first (the first match names the refusal). */
const RANGES: ReadonlyArray<readonly [string, number, Family, string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared (CGNAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'], // includes the broadcast address
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['::', 96, 'ipv6', 'IPv4-compatible'],
  ['::ffff:0:0:0', 96, 'ipv6', 'SIIT'],
  ['64:ff9b:1::', 48, 'ipv6', 'local NAT64'],
  // Teredo tunnels carry an (obfuscated) IPv4 address and reach whatever it names.
  ['2001::', 32, 'ipv6', 'Teredo'],
  ['fc00::', 7, 'ipv6', 'private'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
]

const LISTS = RANGES.map(([network, prefix, family, label]) => {
  const list = new BlockList()
  list.addSubnet(network, prefix, family)
  return { list, family, label }
})

/** The eight 16-bit groups of a valid IPv6 address (compressed, or ending in dotted IPv4). */
function ipv6Groups (address: string): number[] {
  let text = address.split('%')[0]
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number)
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::')
  const front = head === '' ? [] : head.split(':')
  const back = tail === undefined || tail === '' ? [] : tail.split(':')
  const zeros = tail === undefined ? [] : Array(8 - front.length - back.length).fill('0')
  return [...front, ...zeros, ...back].map(g => parseInt(g, 16))
}

/** The IPv4 address an IPv6 address carries (mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16). */
function embeddedIPv4 (address: string): string | undefined {
  const g = ipv6Groups(address)
  const quad = (hi: number, lo: number): string => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`
  if (g.slice(0, 5).every(x => x === 0) && g[5] === 0xffff) return quad(g[6], g[7])
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every(x => x === 0)) return quad(g[6], g[7])
  if (g[0] === 0x2002) return quad(g[1], g[2])
  return undefined
}

/**
 * Why an IP address is refused (the name of its range, e.g. "loopback"), or undefined for a
 * public address. IPv6 forms that carry an IPv4 address are judged by that address.
 */
export function blockedRange (address: string): string | undefined {
  const version = isIP(address.split('%')[0])
  if (version === 0) return 'unparsable'
  if (version === 6) {
    const inner = embeddedIPv4(address)
    if (inner !== undefined) return blockedRange(inner)
  }
  const family: Family = version === 4 ? 'ipv4' : 'ipv6'
  const plain = address.split('%')[0]
  return LISTS.find(r => r.family === family && r.list.check(plain, family))?.label
}

/** The error a refused address or port fails the connection with (IMAGE_ADDRESS_NOT_ALLOWED); for the log only. */
export interface AddressNotAllowedError extends Error {
  code: 'IMAGE_ADDRESS_NOT_ALLOWED'
  /** The range ("loopback", "private"...) or "port N". */
  range: string
}

function notAllowed (range: string): AddressNotAllowedError {
  return Object.assign(new Error(`the address is not allowed (${range} network)`), { code: 'IMAGE_ADDRESS_NOT_ALLOWED' as const, range })
}

function portNotAllowed (port: number): AddressNotAllowedError {
  return Object.assign(new Error(`the port ${port} is not allowed`), { code: 'IMAGE_ADDRESS_NOT_ALLOWED' as const, range: `port ${port}` })
}

export function isAddressNotAllowed (err: unknown): err is AddressNotAllowedError {
  return (err as { code?: unknown } | null)?.code === 'IMAGE_ADDRESS_NOT_ALLOWED'
}

export type AddressClassifier = (address: string) => string | undefined

/** dns.lookup that fails when any address of the name is refused, before a socket connects. */
function guardedLookup (blocked: AddressClassifier): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err !== null) return callback(err, '', 0)
      for (const { address } of addresses) {
        const range = blocked(address)
        if (range !== undefined) return callback(notAllowed(range), '', 0)
      }
      if (options.all === true) return callback(null, addresses)
      callback(null, addresses[0].address, addresses[0].family)
    })
  }
}

/** Ports an image URL may use: a set of them, or 'any'. */
export type AllowedPorts = ReadonlySet<number> | 'any'

/**
 * An undici connector that refuses ports outside `ports` and addresses the classifier names (none when it is
 * false: private networks allowed), on every connection.
 */
export function guardedConnector (timeout: number, blocked: AddressClassifier | false = blockedRange, ports: AllowedPorts = 'any'): buildConnector.connector {
  const connect = undici().buildConnector(blocked === false ? { timeout } : { timeout, lookup: guardedLookup(blocked) })
  return (options, callback) => {
    const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80)
    if (ports !== 'any' && !ports.has(port)) return callback(portNotAllowed(port), null)
    if (blocked === false) return connect(options, callback)
    // IP literals never reach the lookup; undici already stripped IPv6 brackets.
    const literal = options.hostname.replace(/^\[(.*)\]$/, '$1')
    const range = isIP(literal) === 0 ? undefined : blocked(literal)
    if (range !== undefined) return callback(notAllowed(range), null)
    connect(options, (err, socket) => {
      if (err !== null) return callback(err, null)
      // Belt and braces: the peer actually connected to, whatever path led there.
      const peer = (socket as Socket).remoteAddress
      const peerRange = peer === undefined ? 'unknown' : blocked(peer)
      if (peerRange !== undefined) {
        socket.on('error', () => {}).destroy()
        return callback(notAllowed(peerRange), null)
      }
      callback(null, socket)
    })
  }
}
