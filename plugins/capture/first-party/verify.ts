import { Resolver } from 'node:dns/promises'

/** What verification needs from node:dns/promises: a Resolver, or a stand-in with the same three methods. */
export type DnsResolver = Pick<Resolver, 'resolveCname' | 'resolve4' | 'resolve6'>

export interface VerifyResult {
  verified: boolean
  /** What the record says: the CNAME target (first hop), or the addresses of a flattened record. */
  target?: string
  /** Why it is not verified, in words an integrator can act on. */
  reason?: string
  /** The answer came from a DNS failure (timeout, SERVFAIL, refused), not from the records: try again later. */
  temporary?: boolean
}

/** CNAME hops followed before giving up: a record pointing at a CDN alias that points at us is two. */
export const MAX_CNAME_HOPS = 5

/** Lower case, no trailing dot: how host names are compared everywhere in first-party serving. */
export function normaliseHost(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, '')
}

/**
 * A resolver that asks `servers` (ip or ip:port, from capture.dnsServers) or, when empty, the system's.
 * Short timeouts: a check runs on an admin request and in the background, never on a visitor's request.
 */
export function createDnsResolver(servers: readonly string[] = [], options: { timeoutMs?: number, tries?: number } = {}): Resolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 2 })
  if (servers.length) resolver.setServers([...servers])
  return resolver
}

/**
 * Checks that `host` points at the shared script host `expectedTarget`:
 * 1. its CNAME chain (at most MAX_CNAME_HOPS hops) reaches `expectedTarget`, compared case-insensitively
 *    and ignoring a trailing dot; or
 * 2. it has no CNAME but A/AAAA records (a provider that flattens CNAMEs, e.g. at the apex), every one of
 *    which is also an address of `expectedTarget`. A CNAME pointing elsewhere is never rescued by addresses:
 *    the integrator should point it at the script host, which is what keeps working when our addresses change.
 * A DNS failure (not an answer) is `temporary`, so a caller can keep an earlier verification.
 */
export async function verifyFirstPartyHost(host: string, expectedTarget: string, resolver: DnsResolver): Promise<VerifyResult> {
  const name = normaliseHost(host)
  const expected = normaliseHost(expectedTarget)
  const chain: string[] = []
  let current = name
  for (;;) {
    const next = await cname(resolver, current)
    if ('failure' in next) return dnsFailure(current, next.failure)
    if (next.target === undefined) break
    if (next.target === expected) return { verified: true, target: chain[0] ?? next.target }
    if (next.target === name || chain.includes(next.target)) return { verified: false, target: chain[0] ?? next.target, reason: `CNAME chain of ${name} loops at ${next.target}` }
    chain.push(next.target)
    if (chain.length >= MAX_CNAME_HOPS) {
      return { verified: false, target: chain[0], reason: `CNAME chain of ${name} is longer than ${MAX_CNAME_HOPS} hops (${chain.join(' → ')}), expected ${expected}` }
    }
    current = next.target
  }
  if (chain.length) return { verified: false, target: chain[0], reason: `CNAME points to ${chain.join(', which points to ')}, expected ${expected}` }
  return byAddresses(name, expected, resolver)
}

/** No CNAME at `name`: verified when its addresses are all among the script host's. */
async function byAddresses(name: string, expected: string, resolver: DnsResolver): Promise<VerifyResult> {
  const own = await addresses(resolver, name)
  if ('failure' in own) return own.failure === 'ENOTFOUND' ? { verified: false, reason: `no CNAME record for ${name} (the name does not exist in DNS)` } : dnsFailure(name, own.failure)
  if (own.list.length === 0) return { verified: false, reason: `no CNAME record for ${name}` }
  const theirs = await addresses(resolver, expected)
  if ('failure' in theirs) return theirs.failure === 'ENOTFOUND' ? { verified: false, reason: `the script host ${expected} does not exist in DNS (check capture.scriptHost)` } : dnsFailure(expected, theirs.failure)
  const target = own.list.join(', ')
  if (own.list.every((ip) => theirs.list.includes(ip))) return { verified: true, target }
  return {
    verified: false, target,
    reason: `no CNAME record for ${name}, and its addresses (${target}) are not those of ${expected} (${theirs.list.join(', ') || 'none'}); if a CDN proxies it, set the record to DNS only`,
  }
}

type Lookup<T> = T | { failure: string }

/** The CNAME target of `name`, undefined when it has none (NODATA or NXDOMAIN: the chain ends there). */
async function cname(resolver: DnsResolver, name: string): Promise<Lookup<{ target: string | undefined }>> {
  try {
    const [target] = await resolver.resolveCname(name)
    return { target: target === undefined ? undefined : normaliseHost(target) }
  }
  catch (error) {
    const code = errorCode(error)
    return code === 'ENODATA' || code === 'ENOTFOUND' ? { target: undefined } : { failure: code }
  }
}

/** A and AAAA addresses of `name`; empty when it has none; a failure of ENOTFOUND when the name does not exist. */
async function addresses(resolver: DnsResolver, name: string): Promise<Lookup<{ list: string[] }>> {
  const settled = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)])
  const list: string[] = []
  const codes: string[] = []
  for (const result of settled) {
    if (result.status === 'fulfilled') list.push(...result.value)
    else codes.push(errorCode(result.reason))
  }
  const hard = codes.find((code) => code !== 'ENODATA' && code !== 'ENOTFOUND')
  if (hard) return { failure: hard }
  if (list.length === 0 && codes.includes('ENOTFOUND')) return { failure: 'ENOTFOUND' }
  return { list: [...new Set(list)].sort() }
}

function dnsFailure(name: string, code: string): VerifyResult {
  return { verified: false, temporary: true, reason: `DNS lookup of ${name} failed (${code}); try again later` }
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code
  return typeof code === 'string' ? code : 'EUNKNOWN'
}
