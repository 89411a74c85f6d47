import type { H3Event } from 'h3'
import type { ActiveSite } from '../../core/sites/directory.ts'

/** Who sent a hit: the visitor's address and user agent, as far as known. */
export interface Visitor { ip?: string, userAgent?: string }

/** The visitor as the request shows it: its address (see clientIp) and user agent. */
export function requestVisitor(event: H3Event, trustProxy: boolean): Visitor {
  return { ip: clientIp(event, trustProxy), userAgent: event.req.headers.get('user-agent') ?? undefined }
}

/**
 * The visitor's IP: the socket's peer, or with `server.trustProxy` the first address of X-Forwarded-For (the
 * client as the proxy in front saw it). Without trustProxy the header is ignored: anyone can send one.
 */
export function clientIp(event: H3Event, trustProxy: boolean): string | undefined {
  if (trustProxy) {
    const forwarded = event.req.headers.get('x-forwarded-for')?.split(',')[0]?.trim()
    if (forwarded) return stripMappedPrefix(forwarded)
  }
  const ip = (event.req as { ip?: string }).ip
  return ip ? stripMappedPrefix(ip) : undefined
}

function stripMappedPrefix(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip
}

/** Per site: its allowed hosts, normalised once, and the answers for the origins seen (a site has few). */
const originCache = new WeakMap<ActiveSite, { hosts: string[], answers: Map<string, boolean> }>()
const MAX_CACHED_ORIGINS = 1000

/**
 * Whether a browser page at `origin` may send hits for this site: its host is one of the site's domains or a
 * subdomain of one, or the site's first-party host. A site with no domains configured accepts any origin.
 */
export function originAllowed(origin: string, site: ActiveSite): boolean {
  if (site.config.domains.length === 0) return true
  let cache = originCache.get(site)
  if (!cache) {
    const hosts = [...site.config.domains, ...(site.config.firstPartyHost ? [site.config.firstPartyHost] : [])]
      .map((domain) => domain.toLowerCase().replace(/^https?:\/\//, '').replace(/\/.*$/, ''))
    cache = { hosts, answers: new Map() }
    originCache.set(site, cache)
  }
  let allowed = cache.answers.get(origin)
  if (allowed === undefined) {
    allowed = hostAllowed(origin, cache.hosts)
    if (cache.answers.size >= MAX_CACHED_ORIGINS) cache.answers.clear() // junk origins cannot grow it without bound
    cache.answers.set(origin, allowed)
  }
  return allowed
}

function hostAllowed(origin: string, hosts: readonly string[]): boolean {
  let host: string
  try {
    host = new URL(origin).hostname.toLowerCase()
  }
  catch {
    return false
  }
  return hosts.some((d) => host === d || host.endsWith(`.${d}`))
}

/** CORS headers for an allowed origin; text/plain bodies need no preflight, JSON bodies get one. */
export function corsHeaders(origin: string | null): [string, string][] {
  if (!origin) return [['vary', 'Origin']]
  return [['vary', 'Origin'], ['access-control-allow-origin', origin], ['access-control-allow-credentials', 'true']]
}
