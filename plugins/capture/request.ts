import type { H3Event } from 'h3'
import type { ActiveSite } from '../../core/sites/directory.ts'

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

/**
 * Whether a browser page at `origin` may send hits for this site: its host is one of the site's domains or a
 * subdomain of one, or the site's first-party host. A site with no domains configured accepts any origin.
 */
export function originAllowed(origin: string, site: ActiveSite): boolean {
  if (site.config.domains.length === 0) return true
  let host: string
  try {
    host = new URL(origin).hostname.toLowerCase()
  }
  catch {
    return false
  }
  const allowed = [...site.config.domains, ...(site.config.firstPartyHost ? [site.config.firstPartyHost] : [])]
  return allowed.some((domain) => {
    const d = domain.toLowerCase().replace(/^https?:\/\//, '').replace(/\/.*$/, '')
    return host === d || host.endsWith(`.${d}`)
  })
}

/** CORS headers for an allowed origin; text/plain bodies need no preflight, JSON bodies get one. */
export function setCors(event: H3Event, origin: string | null): void {
  event.res.headers.set('vary', 'Origin')
  if (!origin) return
  event.res.headers.set('access-control-allow-origin', origin)
  event.res.headers.set('access-control-allow-credentials', 'true')
}
