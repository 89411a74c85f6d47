/**
 * The client's address: the TCP peer, or with `server.trustProxy` the address the proxies in front report.
 *
 * Every proxy appends the address it received the request from to X-Forwarded-For, and a client can send the
 * header with anything in it. So the chain is read from the right: the peer and each entry that belongs to a
 * trusted proxy are skipped, and the first hop that is not a trusted proxy is the client (the rightmost untrusted
 * hop). The entries left of it were written by the client or by proxies we know nothing about; they are ignored.
 *
 * srvx can do this walk too (its `trustProxy`), but only for exact addresses: it takes no hop count and no CIDR,
 * and its `true` believes the leftmost entry. dcgate therefore gives srvx no `trustProxy` and resolves here, once
 * for every caller: capture, rate limits, deletion records.
 */
import { isIP } from 'node:net'
import type { H3Event } from 'h3'
import ipaddr from 'ipaddr.js'

/** `server.trustProxy`: false, true (loopback and private-network proxies), a hop count, or addresses and CIDRs. */
export type TrustProxy = boolean | number | readonly string[]

/** Names a trustProxy list may hold besides addresses and CIDRs, and the ranges they stand for. */
export const PROXY_RANGE_NAMES = {
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
} as const

/** What `trustProxy: true` trusts: a proxy on this host, or on the private network (Docker, a LAN load balancer). */
const TRUE_MEANS = ['loopback', 'private'] as const

/** Entries walked at most; past them the last one reached is taken (a long chain is hostile or misconfigured). */
const MAX_HOPS = 20

/** One hop of the chain, parsed once: IPv4 as a number (the common case, compared with bit masks), else IPv6. */
interface Hop { text: string, v4?: number, v6?: ipaddr.IPv6 }

/** Compiled ranges: IPv4 as [network, mask] numbers, IPv6 as ipaddr.js CIDRs. */
interface Ranges { v4: [number, number][], v6: [ipaddr.IPv6, number][] }

interface Trust {
  /** Whether the hop at `position` (0 = the TCP peer, 1 = the rightmost X-Forwarded-For entry, …) is a proxy. */
  isProxy: (hop: Hop, position: number) => boolean
}

/**
 * The client address for this request, as `trustProxy` says to read it. Undefined only for a request made
 * in-process (app.request) without a usable X-Forwarded-For: it has no peer.
 */
export function clientIp(event: H3Event, trustProxy: TrustProxy): string | undefined {
  const peer = socketPeer(event)
  if (trustProxy === false || trustProxy === 0) return peer
  return resolveClientIp(peer, event.req.headers.get('x-forwarded-for'), trustProxy)
}

/**
 * The TCP peer's address, never a header: what the admin guard's loopback rule reads. Undefined for a request
 * made in-process (app.request), which only this process can make.
 */
export function socketPeer(event: H3Event): string | undefined {
  const req = event.req as { ip?: string, runtime?: { node?: { req?: { socket?: { remoteAddress?: string } } } } }
  const address = req.runtime?.node?.req?.socket?.remoteAddress ?? req.ip
  return address ? toHop(address.split('%')[0]!)?.text : undefined
}

/** Whether an address is a loopback one (127.0.0.0/8, ::1, and 127.x written as IPv4-mapped IPv6). */
export function isLoopback(address: string): boolean {
  const hop = toHop(address)
  return hop !== undefined && inRanges(hop, LOOPBACK)
}

/** Whether an address is in a list of addresses, CIDRs and range names (`loopback`, `private`), as trustProxy takes. */
export function inAddressList(address: string, list: readonly string[]): boolean {
  const hop = toHop(address)
  return hop !== undefined && list.length > 0 && compileTrust(list)!.isProxy(hop, 0)
}

/**
 * The pure walk behind clientIp. `peer` undefined (an in-process request) counts as a trusted proxy. An entry that
 * is not an IP address ends the walk at the last address a trusted proxy vouched for.
 */
export function resolveClientIp(peer: string | undefined, forwardedFor: string | null | undefined, trustProxy: TrustProxy): string | undefined {
  const trust = compileTrust(trustProxy)
  if (!trust) return peer
  if (peer !== undefined) {
    const hop = toHop(peer)
    if (!hop || !trust.isProxy(hop, 0)) return peer
  }
  if (!forwardedFor) return peer
  const entries = forwardedFor.split(',')
  let client = peer
  for (let i = entries.length - 1, position = 1; i >= 0 && position <= MAX_HOPS; i--, position++) {
    const hop = toHop(stripPort(entries[i]!.trim()))
    if (!hop) break
    client = hop.text
    if (!trust.isProxy(hop, position)) break
  }
  return client
}

/** Why a trustProxy list entry is wrong, or undefined when it is an address, a CIDR or a range name. */
export function proxyEntryProblem(entry: string): string | undefined {
  if (isRangeName(entry)) return undefined
  if (entry.includes('/') ? ipaddr.isValidCIDR(entry) : isIP(entry) !== 0) return undefined
  return `must be an IP address, a CIDR such as 10.0.0.0/8, or one of ${Object.keys(PROXY_RANGE_NAMES).map((name) => `'${name}'`).join(', ')}`
}

/** Compiled per option value: the config is resolved once, so its list is one object for the process's life. */
const compiledLists = new WeakMap<readonly string[], Trust>()
const LOOPBACK = compileRanges(PROXY_RANGE_NAMES.loopback)
const TRUST_TRUE: Trust = listTrust(TRUE_MEANS)

/** Own keys only: `'toString' in PROXY_RANGE_NAMES` is true too. */
function isRangeName(entry: string): entry is keyof typeof PROXY_RANGE_NAMES {
  return Object.hasOwn(PROXY_RANGE_NAMES, entry)
}

function compileTrust(trustProxy: TrustProxy): Trust | undefined {
  if (trustProxy === false || trustProxy === 0) return undefined
  if (trustProxy === true) return TRUST_TRUE
  if (typeof trustProxy === 'number') return { isProxy: (_hop, position) => position < trustProxy }
  let trust = compiledLists.get(trustProxy)
  if (!trust) compiledLists.set(trustProxy, trust = listTrust(trustProxy))
  return trust
}

function listTrust(entries: readonly string[]): Trust {
  const ranges = compileRanges(entries.flatMap((entry) => isRangeName(entry) ? PROXY_RANGE_NAMES[entry] : [entry]))
  return { isProxy: (hop) => inRanges(hop, ranges) }
}

function compileRanges(entries: readonly string[]): Ranges {
  const ranges: Ranges = { v4: [], v6: [] }
  for (const entry of entries) {
    const valid = entry.includes('/') ? ipaddr.isValidCIDR(entry) : isIP(entry) !== 0
    if (!valid) continue
    const [address, bits] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), isIP(entry) === 4 ? 32 : 128]
    if (address.kind() === 'ipv4') {
      const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0
      ranges.v4.push([(dottedQuad(address.toString())! & mask) >>> 0, mask])
    }
    else ranges.v6.push([address as ipaddr.IPv6, bits])
  }
  return ranges
}

function inRanges(hop: Hop, ranges: Ranges): boolean {
  const { v4, v6 } = hop
  if (v4 !== undefined) return ranges.v4.some(([network, mask]) => ((v4 & mask) >>> 0) === network)
  return v6 !== undefined && ranges.v6.some(([network, bits]) => v6.match(network, bits))
}

/** `1.2.3.4:80` → `1.2.3.4`, `[2001:db8::1]:80` → `2001:db8::1` (some proxies append the port). */
function stripPort(entry: string): string {
  if (entry.startsWith('[')) {
    const end = entry.indexOf(']')
    return end > 0 ? entry.slice(1, end) : entry
  }
  const colon = entry.indexOf(':')
  return colon > 0 && colon === entry.lastIndexOf(':') ? entry.slice(0, colon) : entry
}

/** A valid address, in the form dcgate stores (IPv4-mapped IPv6 as IPv4), or undefined when it is not one. */
function toHop(text: string): Hop | undefined {
  const v4 = dottedQuad(text)
  if (v4 !== undefined) return { text, v4 }
  // An IPv4 peer on a dual-stack listener (`::ffff:127.0.0.1`), on every request: read without ipaddr.js, whose
  // parse and conversion back allocated 2.5 kB per /collect hit.
  const quad = ipv4MappedTail(text)
  const quadValue = quad === undefined ? undefined : dottedQuad(quad)
  if (quadValue !== undefined) return { text: quad!, v4: quadValue }
  // IPv6 (45 characters at most, with an IPv4 tail); a zone id (fe80::1%eth0) is not an address to store.
  if (text.length > 45 || !text.includes(':') || text.includes('%') || isIP(text) !== 6) return undefined
  const v6 = ipaddr.IPv6.parse(text)
  if (!v6.isIPv4MappedAddress()) return { text, v6 }
  const mapped = v6.toIPv4Address().toString()
  return { text: mapped, v4: dottedQuad(mapped) }
}

/** The dotted quad of `::ffff:a.b.c.d` (any case), the IPv4-mapped form Node gives an IPv4 peer; else undefined. */
function ipv4MappedTail(text: string): string | undefined {
  return text.length > 7 && text.length <= 22 && text.slice(0, 7).toLowerCase() === '::ffff:' ? text.slice(7) : undefined
}

/**
 * A dotted quad without leading zeros as an unsigned 32-bit number, parsed by hand: the common case, and about 5x
 * faster than ipaddr.js. Also what capture's address facts use (plugins/capture/intel/ip.ts).
 */
export function dottedQuad(text: string): number | undefined {
  let value = 0
  let octet = -1
  let dots = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 46) {
      if (octet < 0 || ++dots > 3) return undefined
      value = value * 256 + octet
      octet = -1
    }
    else if (c >= 48 && c <= 57) {
      if (octet === 0) return undefined // a leading zero: octal to some parsers; refuse rather than guess
      octet = octet < 0 ? c - 48 : octet * 10 + c - 48
      if (octet > 255) return undefined
    }
    else return undefined
  }
  return dots === 3 && octet >= 0 ? value * 256 + octet : undefined
}
