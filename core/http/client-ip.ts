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

type Address = ipaddr.IPv4 | ipaddr.IPv6
type Cidr = [Address, number]

interface Trust {
  /** Whether the hop at `position` (0 = the TCP peer, 1 = the rightmost X-Forwarded-For entry, …) is a proxy. */
  isProxy: (address: string, position: number) => boolean
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
  return address ? toAddressText(address.split('%')[0]!) : undefined
}

/** Whether an address is a loopback one (127.0.0.0/8, ::1, and 127.x written as IPv4-mapped IPv6). */
export function isLoopback(address: string): boolean {
  const text = toAddressText(address)
  return text !== undefined && inRanges(text, LOOPBACK)
}

/**
 * The pure walk behind clientIp. `peer` undefined (an in-process request) counts as a trusted proxy. An entry that
 * is not an IP address ends the walk at the last address a trusted proxy vouched for.
 */
export function resolveClientIp(peer: string | undefined, forwardedFor: string | null | undefined, trustProxy: TrustProxy): string | undefined {
  const trust = compileTrust(trustProxy)
  if (!trust) return peer
  if (peer !== undefined && !trust.isProxy(peer, 0)) return peer
  if (!forwardedFor) return peer
  const entries = forwardedFor.split(',')
  let client = peer
  for (let i = entries.length - 1, position = 1; i >= 0 && position <= MAX_HOPS; i--, position++) {
    const address = toAddressText(stripPort(entries[i]!.trim()))
    if (address === undefined) break
    client = address
    if (!trust.isProxy(address, position)) break
  }
  return client
}

/** Why a trustProxy list entry is wrong, or undefined when it is an address, a CIDR or a range name. */
export function proxyEntryProblem(entry: string): string | undefined {
  if (entry in PROXY_RANGE_NAMES) return undefined
  if (entry.includes('/') ? ipaddr.isValidCIDR(entry) : isIP(entry) !== 0) return undefined
  return `must be an IP address, a CIDR such as 10.0.0.0/8, or one of ${Object.keys(PROXY_RANGE_NAMES).map((name) => `'${name}'`).join(', ')}`
}

/** Compiled per option value: the config is resolved once, so its list is one object for the process's life. */
const compiledLists = new WeakMap<readonly string[], Trust>()
const TRUST_TRUE: Trust = listTrust(TRUE_MEANS)
const LOOPBACK = compiledRanges(PROXY_RANGE_NAMES.loopback)

function compileTrust(trustProxy: TrustProxy): Trust | undefined {
  if (trustProxy === false || trustProxy === 0) return undefined
  if (trustProxy === true) return TRUST_TRUE
  if (typeof trustProxy === 'number') return { isProxy: (_address, position) => position < trustProxy }
  let trust = compiledLists.get(trustProxy)
  if (!trust) compiledLists.set(trustProxy, trust = listTrust(trustProxy))
  return trust
}

function listTrust(entries: readonly string[]): Trust {
  const ranges = entries.flatMap((entry) => compiledRanges(entry in PROXY_RANGE_NAMES ? PROXY_RANGE_NAMES[entry as keyof typeof PROXY_RANGE_NAMES] : [entry]))
  // Proxies are few, and their addresses repeat on every request: remember the verdicts (bounded: peers vary).
  const verdicts = new Map<string, boolean>()
  return {
    isProxy(address) {
      let verdict = verdicts.get(address)
      if (verdict === undefined) {
        verdict = inRanges(address, ranges)
        if (verdicts.size >= 1000) verdicts.clear()
        verdicts.set(address, verdict)
      }
      return verdict
    },
  }
}

function compiledRanges(entries: readonly string[]): Cidr[] {
  return entries.flatMap((entry): Cidr[] => {
    if (entry.includes('/')) return ipaddr.isValidCIDR(entry) ? [ipaddr.parseCIDR(entry)] : []
    if (!isIP(entry)) return []
    const address = ipaddr.process(entry)
    return [[address, address.kind() === 'ipv4' ? 32 : 128]]
  })
}

function inRanges(text: string, ranges: readonly Cidr[]): boolean {
  let address: Address
  try {
    address = ipaddr.process(text)
  }
  catch {
    return false
  }
  // A range is matched in its own family; an IPv4 range also matches the same address written IPv4-mapped.
  return ranges.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits))
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

/** A valid address in the form dcgate stores (IPv4-mapped IPv6 as IPv4), or undefined when it is not an address. */
function toAddressText(text: string): string | undefined {
  const family = isIP(text)
  if (family === 4) return text
  if (family !== 6 || text.includes('%')) return undefined
  if (!text.toLowerCase().startsWith('::ffff:')) return text
  const address = ipaddr.process(text)
  return address.kind() === 'ipv4' ? address.toString() : text
}
