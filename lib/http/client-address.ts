// The key a client address is counted under by every per-address limit.
import { isIPv6 } from 'node:net'

/**
 * An IPv4 address as is; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as its IPv4 form; any other IPv6
 * address as its /64 prefix (`2001:db8:1:2::/64`), since one subscriber usually holds a whole /64.
 */
export function addressBucket (address: string): string {
  if (!address.includes(':')) return address
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)
  if (mapped !== null) return mapped[1]
  const plain = address.split('%')[0]
  if (!isIPv6(plain)) return address
  return `${ipv6Groups(plain).slice(0, 4).map(g => g.toString(16)).join(':')}::/64`
}

/** The eight 16-bit groups of a valid IPv6 address (compressed, or ending in dotted IPv4). */
function ipv6Groups (address: string): number[] {
  let text = address
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
