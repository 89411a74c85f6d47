import { createHash, timingSafeEqual } from 'node:crypto'
import type { H3Event, Middleware } from 'h3'
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
 * Admin API: bearer admin token, and only from loopback unless allowRemote. A request relayed by a
 * proxy on this host (forwarding headers, no trusted proxy) counts as remote.
 */
export function createAdminGuard(token: string, options: { allowRemote: boolean, trustProxy: boolean }): Middleware {
  const expected = digest(token)
  return (event) => {
    if (!options.allowRemote && !isLocal(event, options.trustProxy)) {
      throw apiError(403, { message: 'The admin API answers on loopback only (set admin.allowRemote to change this)' })
    }
    const header = event.req.headers.get('authorization') ?? ''
    const given = header.startsWith('Bearer ') ? header.slice(7).trim() : ''
    if (!given || !timingSafeEqual(digest(given), expected)) throw apiError(401, { message: 'Missing or wrong admin token' })
  }
}

function isLocal(event: H3Event, trustProxy: boolean): boolean {
  const forwarded = event.req.headers.has('x-forwarded-for') || event.req.headers.has('forwarded')
  if (forwarded && !trustProxy) return false
  const ip = (event.req as { ip?: string }).ip
  // No socket at all: the request was made in-process (app.request), which only this process can do.
  if (ip === undefined) return true
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.')
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}
