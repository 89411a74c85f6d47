import type { H3Event } from 'h3'
import { clientIp, type TrustProxy } from '../../core/http/client-ip.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'
import { cookieDomain } from './first-party/cookie.ts'
import { normaliseHost } from './first-party/verify.ts'

/** Who sent a hit: the visitor's address and user agent, as far as known. */
export interface Visitor { ip?: string, userAgent?: string }

/** The visitor as the request shows it: its address as server.trustProxy resolves it, and its user agent. */
export function requestVisitor(event: H3Event, trustProxy: TrustProxy): Visitor {
  return { ip: clientIp(event, trustProxy), userAgent: event.req.headers.get('user-agent') ?? undefined }
}

/**
 * Whether the visitor opted out of the sale or sharing of their data with Global Privacy Control: the browser's
 * `Sec-GPC: 1` header (https://w3c.github.io/gpc/), or `gpc: true` in the body, which the script sets when
 * navigator.globalPrivacyControl is true and a server-side worker forwards. An opt-out is believed from anyone: it
 * can only make dcgate send less.
 */
export function globalPrivacyControl(event: H3Event, body: { gpc?: boolean }): boolean {
  return body.gpc === true || event.req.headers.get('sec-gpc')?.trim() === '1'
}

/**
 * How a browser page at an origin is answered: `refused` (403), `open` (its origin reflected, no credentials: the
 * browser neither sends cookies it could not send anyway nor lets the page read a credentialed answer), or
 * `credentials` (reflected with `Access-Control-Allow-Credentials: true`).
 */
export type OriginVerdict = 'refused' | 'open' | 'credentials'

/**
 * A site with domains takes pages on them and on its first-party host, with credentials; any other origin, `null`
 * included (sandboxed frames, file: pages), is refused. A site without domains takes any origin, but credentials
 * only for a page of the same site as its verified first-party host, the one host that sets a cookie.
 */
export function originVerdict(origin: string, site: ActiveSite, verifiedFirstPartyHost: string | undefined): OriginVerdict {
  if (site.config.domains.length > 0) return originAllowed(origin, site) ? 'credentials' : 'refused'
  return verifiedFirstPartyHost && sameSiteAs(origin, verifiedFirstPartyHost) ? 'credentials' : 'open'
}

/** Per site: its allowed hosts, normalised once, and the answers for the origins seen (a site has few). */
const originCache = new WeakMap<ActiveSite, { hosts: string[], answers: Map<string, boolean> }>()
const MAX_CACHED_ORIGINS = 1000

/**
 * Whether a page at `origin` is one of the site's pages: its host is one of the site's domains or a subdomain of
 * one, or the site's first-party host. False for a site with no domains (see originVerdict) and for `null`.
 */
export function originAllowed(origin: string, site: ActiveSite): boolean {
  if (site.config.domains.length === 0) return false
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
  const host = originHost(origin)
  return host !== undefined && hosts.some((d) => host === d || host.endsWith(`.${d}`))
}

/** The page is the first-party host itself, or under the domain its visitor cookie is set for (t.shop.example → shop.example). */
function sameSiteAs(origin: string, firstPartyHost: string): boolean {
  const host = originHost(origin)
  if (host === undefined) return false
  const firstParty = normaliseHost(firstPartyHost)
  const parent = cookieDomain(firstParty)
  return host === firstParty || (parent !== undefined && (host === parent || host.endsWith(`.${parent}`)))
}

/** The hostname of an http(s) origin; undefined for `null`, other schemes and anything unparseable. */
function originHost(origin: string): string | undefined {
  let url: URL
  try {
    url = new URL(origin)
  }
  catch {
    return undefined
  }
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.hostname.toLowerCase() : undefined
}

type HeaderList = readonly (readonly [string, string])[]

const VARY_ONLY: HeaderList = [['vary', 'Origin']]
/** The lists made per origin and verdict: a site's pages have few origins, and every hit carries one. */
const corsCache = new Map<string, HeaderList>()

/** CORS headers for an answer: the origin reflected when allowed, with credentials only when the verdict says so. */
export function corsHeaders(origin: string | null, verdict: OriginVerdict | undefined): HeaderList {
  if (!origin || !verdict || verdict === 'refused') return VARY_ONLY
  const key = `${verdict}\u0000${origin}`
  let headers = corsCache.get(key)
  if (headers) return headers
  headers = verdict === 'open'
    ? [['vary', 'Origin'], ['access-control-allow-origin', origin]]
    : [['vary', 'Origin'], ['access-control-allow-origin', origin], ['access-control-allow-credentials', 'true']]
  if (corsCache.size >= MAX_CACHED_ORIGINS) corsCache.clear() // junk origins cannot grow it without bound
  corsCache.set(key, headers)
  return headers
}
