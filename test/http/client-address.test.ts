// lib/http/client-address.ts: which address a request is counted under, behind trusted proxies or not.
import t from 'tap'
import { addressBucket, clientAddress, parseTrustedProxies } from '../../lib/index.ts'

const trusted = parseTrustedProxies('10.0.0.0/8, 192.168.1.7, fd00::/8, ::1')

t.test('addressBucket: IPv4 as is, IPv4-mapped as IPv4, other IPv6 as its /64 whatever the spelling', async t => {
  const cases: Array<[string, string]> = [
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['::FFFF:203.0.113.9', '203.0.113.9'],
    ['2001:db8:1:2::5', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff:0:0:9', '2001:db8:1:2::/64'],
    ['[2001:db8:1:2::1]', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8::/64'],
    ['2001:db8:0:0:1::', '2001:db8::/64'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4::/64'],
    ['fe80::1%eth0', 'fe80::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b::/64'],
    ['::1', '::/64'],
    ['not-an-address', 'not-an-address'],
  ]
  for (const [address, bucket] of cases) t.equal(addressBucket(address), bucket, address)
})

t.test('parseTrustedProxies takes addresses and CIDR ranges, IPv4 and IPv6, and names a bad entry', async t => {
  t.ok(trusted.includes('10.200.3.4'))
  t.ok(trusted.includes('::ffff:10.1.1.1'), 'an IPv4-mapped peer matches an IPv4 range')
  t.ok(trusted.includes('192.168.1.7'))
  t.notOk(trusted.includes('192.168.1.8'))
  t.ok(trusted.includes('fd12:3456::1'))
  t.ok(trusted.includes('0:0:0:0:0:0:0:1'), '::1 in another spelling')
  t.notOk(trusted.includes('fe80::1'))
  t.notOk(trusted.includes('garbage'))
  t.notOk(parseTrustedProxies('').includes('127.0.0.1'), 'an empty list trusts nobody')
  t.ok(parseTrustedProxies(['127.0.0.1', ' 2001:db8::/32 ']).includes('2001:db8:ffff::1'), 'a list works too')
  for (const bad of ['10.0.0.0/33', 'proxy.example.com', '10.0.0.0/', '::/129', '1.2.3.4/8x', '10.0.0.0/-1']) {
    t.throws(() => parseTrustedProxies(`127.0.0.1, ${bad}`), new TypeError(`trustedProxies: ${JSON.stringify(bad)} is not an IP address or a CIDR range`))
  }
})

t.test('a forwarding header is believed only from a trusted peer', async t => {
  t.equal(clientAddress('203.0.113.1', { 'x-forwarded-for': '6.6.6.6' }, trusted), '203.0.113.1', 'an untrusted peer cannot name another client')
  t.equal(clientAddress('203.0.113.1', { forwarded: 'for=6.6.6.6' }, trusted), '203.0.113.1')
  t.equal(clientAddress('10.0.0.5', { 'x-forwarded-for': '6.6.6.6' }, undefined), '10.0.0.5', 'without TRUSTED_PROXIES nobody is trusted')
  t.equal(clientAddress(undefined, { 'x-forwarded-for': '6.6.6.6' }, trusted), undefined)
  t.equal(clientAddress('10.0.0.5', {}, trusted), '10.0.0.5', 'a trusted peer without the header is the client')
})

t.test('X-Forwarded-For is walked from the right past trusted hops; what a client wrote on the left is not believed', async t => {
  t.equal(clientAddress('10.0.0.5', { 'x-forwarded-for': '6.6.6.6, 203.0.113.9, 10.0.0.3' }, trusted), '203.0.113.9')
  t.equal(clientAddress('::ffff:10.0.0.5', { 'x-forwarded-for': '203.0.113.9' }, trusted), '203.0.113.9', 'an IPv4-mapped trusted peer')
  t.equal(clientAddress('10.0.0.5', { 'x-forwarded-for': '203.0.113.7:5555' }, trusted), '203.0.113.7', 'a port is dropped')
  t.equal(clientAddress('10.0.0.5', { 'x-forwarded-for': '[2001:db8::7]:443' }, trusted), '2001:db8::7')
  t.equal(clientAddress('10.0.0.5', { 'x-forwarded-for': '2001:db8::7' }, trusted), '2001:db8::7')
  t.equal(clientAddress('10.0.0.5', { 'x-forwarded-for': '10.0.0.1, 10.0.0.2' }, trusted), '10.0.0.1', 'every hop trusted: the leftmost')
  t.equal(clientAddress('10.0.0.5', { 'x-forwarded-for': 'unknown, 10.0.0.2' }, trusted), '10.0.0.2', 'a hop that is no address stops the walk')
  t.equal(clientAddress('10.0.0.5', { 'x-forwarded-for': ['6.6.6.6', '203.0.113.9'] }, trusted), '203.0.113.9', 'repeated headers read as one list')
  t.equal(clientAddress('10.0.0.5', { 'x-forwarded-for': ' ' }, trusted), '10.0.0.5', 'an empty header is no header')
  t.equal(clientAddress('10.0.0.5', { 'x-forwarded-for': '203.0.113.9', forwarded: 'for=6.6.6.6' }, trusted), '203.0.113.9', 'X-Forwarded-For wins over Forwarded')
})

t.test('RFC 7239 Forwarded: for= with quoted and bracketed IPv6, ports, other parameters, obfuscated hops', async t => {
  t.equal(clientAddress('10.0.0.5', { forwarded: 'for=192.0.2.60;proto=http;by=203.0.113.43' }, trusted), '192.0.2.60')
  t.equal(clientAddress('10.0.0.5', { forwarded: 'for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https, for=10.0.0.4' }, trusted), '2001:db8:cafe::17')
  t.equal(clientAddress('10.0.0.5', { forwarded: 'For="[2001:db8:cafe::17]"' }, trusted), '2001:db8:cafe::17', 'the parameter name in any case')
  t.equal(clientAddress('10.0.0.5', { forwarded: 'for="192.0.2.43:47011"' }, trusted), '192.0.2.43')
  t.equal(clientAddress('10.0.0.5', { forwarded: 'for=192.0.2.43;by="a,b;c", for=10.0.0.4' }, trusted), '192.0.2.43', 'separators inside quotes are text')
  t.equal(clientAddress('10.0.0.5', { forwarded: 'for="\\"quoted\\""' }, trusted), '10.0.0.5', 'escapes inside quotes')
  t.equal(clientAddress('10.0.0.5', { forwarded: 'for=_hidden, for=10.0.0.4' }, trusted), '10.0.0.4', 'an obfuscated hop stops the walk at the last address read')
  t.equal(clientAddress('10.0.0.5', { forwarded: 'for=unknown' }, trusted), '10.0.0.5')
  t.equal(clientAddress('10.0.0.5', { forwarded: 'proto=https;by=10.0.0.5' }, trusted), '10.0.0.5', 'an element without for= names nobody')
  t.equal(clientAddress('10.0.0.5', { forwarded: 'for="[2001:db8::1"' }, trusted), '10.0.0.5', 'an unclosed bracket is no address')
})
