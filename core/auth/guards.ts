import { createHash, timingSafeEqual } from 'node:crypto'
import type { H3Event, Middleware } from 'h3'
import { inAddressList, isLoopback, socketPeer, type TrustProxy } from '../http/client-ip.ts'
import { apiError } from '../http/errors.ts'
import type { ActiveSite } from '../sites/directory.ts'
import type { KeyVerifier, VerifiedKey } from './verifier.ts'

declare module 'h3' {
  interface H3EventContext {
    /** The site the request's private key belongs to (routes with auth: 'key'). */
    site?: ActiveSite
    apiKeyId?: string
  }
}

/**
 * x-dc-key authentication with the spec's exact 401/500 bodies. A cached verdict is applied
 * synchronously (no promise on the hot path); otherwise the verifier asks the cache and database.
 */
export function createKeyGuard(verifier: KeyVerifier, onFailure: (error: unknown, event: H3Event) => Promise<void>): Middleware {
  const apply = (event: H3Event, verified: VerifiedKey | null) => {
    if (!verified) throw apiError(401, { message: 'Invalid API key' })
    event.context.site = verified.site
    event.context.apiKeyId = verified.keyId
  }
  const verifySlowly = async (event: H3Event, key: string) => {
    let verified: VerifiedKey | null
    try {
      verified = await verifier.verify(key)
    }
    catch (error) {
      await onFailure(error, event)
      throw apiError(500, { message: 'API key validation failed' })
    }
    apply(event, verified)
  }
  return (event) => {
    const key = event.req.headers.get('x-dc-key')?.trim()
    if (!key) throw apiError(401, { message: 'Missing x-dc-key header' })
    const cached = verifier.peek(key)
    if (cached === undefined) return verifySlowly(event, key)
    apply(event, cached)
  }
}

/**
 * Admin API: bearer admin token, and only from loopback unless allowRemote. Loopback means the TCP peer, never a
 * header; a request relayed by a proxy (from an `admin.trustedProxies` address, or carrying forwarding headers)
 * counts as remote, whatever server.trustProxy says, so a reverse proxy on this host does not open the admin API to
 * the internet.
 */
export function createAdminGuard(token: string, options: { allowRemote: boolean, proxies: readonly string[] }): Middleware {
  const hasToken = createAdminTokenCheck(token)
  return (event) => {
    if (!options.allowRemote && !isLocal(event, options.proxies)) {
      throw apiError(403, { message: 'The admin API answers on loopback only (set admin.allowRemote to change this)' })
    }
    if (!hasToken(event)) throw apiError(401, { message: 'Missing or wrong admin token' })
  }
}

/** Whether the request carries the admin token as a bearer token (compared in constant time). */
export function createAdminTokenCheck(token: string): (event: H3Event) => boolean {
  const expected = digest(token)
  return (event) => {
    const header = event.req.headers.get('authorization') ?? ''
    const given = header.startsWith('Bearer ') ? header.slice(7).trim() : ''
    return given !== '' && timingSafeEqual(digest(given), expected)
  }
}

const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const

/**
 * Whether a request came straight from this host: its TCP peer is a loopback address that is not a proxy's
 * (`proxies`: admin.trustedProxies), and it carries no forwarding header. A proxy on this host connects from
 * loopback too and need not add a header, so only its listed address tells its requests apart.
 */
export function isLocal(event: H3Event, proxies: readonly string[]): boolean {
  if (FORWARDING_HEADERS.some((name) => event.req.headers.has(name))) return false
  const peer = socketPeer(event)
  // No socket at all: the request was made in-process (app.request), which only this process can do.
  if (peer === undefined) return true
  return isLoopback(peer) && !inAddressList(peer, proxies)
}

/** admin.trustedProxies, or when unset the addresses server.trustProxy lists (a listed proxy is never local). */
export function adminProxies(config: { admin: { trustedProxies?: string[] }, server: { trustProxy: TrustProxy } }): readonly string[] {
  return config.admin.trustedProxies ?? (Array.isArray(config.server.trustProxy) ? config.server.trustProxy : [])
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}
