// The client's address as the limiters count it: the peer's, or, when the peer is a trusted proxy, the one its
// X-Forwarded-For / Forwarded header names; and addressBucket(), the key every per-address limit counts under.
import { BlockList, isIP, isIPv4 } from 'node:net'

/** The proxies whose forwarding headers are believed (TRUSTED_PROXIES), from parseTrustedProxies(). */
export interface TrustedProxies {
  /** True when `address` (any spelling, IPv4-mapped included) is one of the trusted addresses or ranges. */
  includes (address: string): boolean
}

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i

/** An address without brackets or zone, an IPv4-mapped IPv6 address as its IPv4 form; undefined when it is not an IP address. */
function canonical (address: string): string | undefined {
  let a = address.trim()
  if (a.startsWith('[') && a.endsWith(']')) a = a.slice(1, -1)
  const zone = a.indexOf('%')
  if (zone !== -1) a = a.slice(0, zone)
  const mapped = MAPPED_IPV4.exec(a)
  if (mapped !== null) a = mapped[1]
  return isIP(a) === 0 ? undefined : a.toLowerCase()
}

/**
 * Trusted proxies from a comma-separated list (or an array) of addresses and CIDR ranges, IPv4 or IPv6
 * (`10.0.0.0/8, 192.168.1.7, fd00::/8`). Throws a TypeError naming the first entry that is neither.
 */
export function parseTrustedProxies (list: string | readonly string[]): TrustedProxies {
  const entries = (typeof list === 'string' ? list.split(',') : list).map(s => s.trim()).filter(s => s !== '')
  const blocks = new BlockList()
  for (const entry of entries) {
    const slash = entry.indexOf('/')
    const address = canonical(slash === -1 ? entry : entry.slice(0, slash))
    const family = address === undefined ? undefined : isIPv4(address) ? 'ipv4' : 'ipv6'
    const bits = slash === -1 ? undefined : entry.slice(slash + 1)
    const prefix = bits === undefined ? undefined : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN
    if (address === undefined || family === undefined || (prefix !== undefined && !(prefix <= (family === 'ipv4' ? 32 : 128)))) {
      throw new TypeError(`trustedProxies: ${JSON.stringify(entry)} is not an IP address or a CIDR range`)
    }
    if (prefix === undefined) blocks.addAddress(address, family)
    else blocks.addSubnet(address, prefix, family)
  }
  return {
    includes (address) {
      const a = canonical(address)
      return a !== undefined && blocks.check(a, isIPv4(a) ? 'ipv4' : 'ipv6')
    },
  }
}

/** The address in one hop of a forwarding header: `1.2.3.4`, `1.2.3.4:80`, `[2001:db8::1]`, `[2001:db8::1]:443`, `2001:db8::1`. */
function hopAddress (hop: string): string | undefined {
  const h = hop.trim()
  if (h.startsWith('[')) {
    const end = h.indexOf(']')
    return end === -1 ? undefined : canonical(h.slice(1, end))
  }
  const colon = h.indexOf(':')
  // One colon is an IPv4 address with a port; more are an IPv6 address, which carries no port without brackets.
  return canonical(colon !== -1 && colon === h.lastIndexOf(':') ? h.slice(0, colon) : h)
}

/** Splits on `separator` outside double-quoted strings (RFC 7230 quoted-string, with backslash escapes). */
function splitOutsideQuotes (value: string, separator: string): string[] {
  const parts: string[] = []
  let start = 0
  let quoted = false
  for (let i = 0; i < value.length; i++) {
    const c = value[i]
    if (quoted && c === '\\') i++
    else if (c === '"') quoted = !quoted
    else if (!quoted && c === separator) {
      parts.push(value.slice(start, i))
      start = i + 1
    }
  }
  parts.push(value.slice(start))
  return parts
}

/** The `for=` value of each element of an RFC 7239 Forwarded header ('' for an element without one). */
function forwardedFor (header: string): string[] {
  return splitOutsideQuotes(header, ',').map(element => {
    for (const pair of splitOutsideQuotes(element, ';')) {
      const eq = pair.indexOf('=')
      if (eq === -1 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue
      const value = pair.slice(eq + 1).trim()
      return value.startsWith('"') && value.endsWith('"') && value.length >= 2
        ? value.slice(1, -1).replace(/\\(.)/g, '$1')
        : value
    }
    return ''
  })
}

type Headers = Readonly<Record<string, string | readonly string[] | undefined>>

function header (headers: Headers, name: string): string | undefined {
  const value = headers[name]
  const joined = Array.isArray(value) ? value.join(',') : value as string | undefined
  return joined === undefined || joined.trim() === '' ? undefined : joined
}

/**
 * The client's address. The peer's, unless the peer is a trusted proxy: then the forwarding header is walked
 * from the right (the hop the trusted proxy added) past every trusted hop, and the first untrusted hop is the
 * client; an entry that is not an address (`unknown`, an obfuscated `_name`) stops the walk at the last address
 * read. X-Forwarded-For is read when present (what common ingresses and load balancers write), else Forwarded.
 */
export function clientAddress (peer: string | undefined, headers: Headers, trusted: TrustedProxies | undefined): string | undefined {
  if (trusted === undefined || peer === undefined || !trusted.includes(peer)) return peer
  const xff = header(headers, 'x-forwarded-for')
  const forwarded = xff === undefined ? header(headers, 'forwarded') : undefined
  const hops = xff !== undefined ? xff.split(',') : forwarded !== undefined ? forwardedFor(forwarded) : []
  let client = peer
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hopAddress(hops[i])
    if (hop === undefined) break
    client = hop
    if (!trusted.includes(hop)) break
  }
  return client
}

/** The eight 16-bit groups of a valid IPv6 address (an embedded IPv4 tail included). */
function ipv6Groups (address: string): number[] {
  let text = address
  const lastColon = text.lastIndexOf(':')
  if (text.includes('.', lastColon)) {
    const [a, b, c, d] = text.slice(lastColon + 1).split('.').map(Number)
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const groups = (s: string): number[] => s === '' ? [] : s.split(':').map(g => parseInt(g, 16))
  const gap = text.indexOf('::')
  if (gap === -1) return groups(text)
  const left = groups(text.slice(0, gap))
  const right = groups(text.slice(gap + 2))
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right]
}

/**
 * The key a client address is counted under by every per-address limit: an IPv4 address as is, an IPv4-mapped
 * IPv6 address as its IPv4 form, any other IPv6 address as its /64 in RFC 5952 form (`2001:db8:1:2::/64`), since one subscriber
 * usually holds a whole /64. Different spellings of one address give one key; a value that is not an IP address
 * is its own key.
 */
export function addressBucket (address: string): string {
  const a = canonical(address)
  if (a === undefined) return address
  if (isIPv4(a)) return a
  return rfc5952([...ipv6Groups(a).slice(0, 4), 0, 0, 0, 0]) + '/64'
}

/** RFC 5952 text of eight groups: lower-case hex, no leading zeros, the longest run of two or more zero groups as `::`. */
function rfc5952 (groups: number[]): string {
  let best = -1
  let bestLength = 1
  for (let i = 0; i < groups.length; i++) {
    let end = i
    while (end < groups.length && groups[end] === 0) end++
    if (end - i > bestLength) { best = i; bestLength = end - i }
    i = Math.max(i, end - 1)
  }
  const hex = (from: number, to: number): string => groups.slice(from, to).map(g => g.toString(16)).join(':')
  return best === -1 ? hex(0, 8) : `${hex(0, best)}::${hex(best + bestLength, 8)}`
}
