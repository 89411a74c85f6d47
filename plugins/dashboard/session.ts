import { createHash, randomBytes } from 'node:crypto'
import { deleteCookie, getCookie, setCookie, type H3Event } from 'h3'
import type { Storage } from 'unstorage'
import type { TrustProxy } from '../../core/http/client-ip.ts'
import type { Flash, Viewer } from './page.ts'

export const SESSION_COOKIE = 'dcgate_dashboard'

export interface Session {
  viewer: Viewer
  /** The value every form of this session carries in its `csrf` field. */
  csrf: string
  /** Epoch ms; the memory storage ignores TTLs, so the expiry is checked on read. */
  expiresAt: number
  flash?: Flash
  /** An operator's session: a digest of the admin token it was opened with (a new token ends older sessions). */
  tokenDigest?: string
}

export interface Sessions {
  /** Starts a session for the viewer and sets its cookie. */
  start: (event: H3Event, viewer: Viewer) => Promise<Session>
  /** The request's live session, or undefined. */
  read: (event: H3Event) => Promise<{ key: string, session: Session } | undefined>
  save: (key: string, session: Session) => Promise<void>
  /** Ends the request's session and clears its cookie. */
  end: (event: H3Event) => Promise<void>
}

/**
 * Dashboard sessions in the shared storage (Redis when configured, so every instance knows them), keyed by the
 * SHA-256 of the cookie's value: the storage never holds a value that would sign anyone in. The cookie is HttpOnly,
 * SameSite=Strict, limited to /dashboard, and Secure when the request came over HTTPS.
 */
export function createSessions(storage: Storage, options: { hours: number, trustProxy: TrustProxy, adminToken: string }): Sessions {
  const ttlSeconds = options.hours * 3600
  // Salted apart from the session keys; never the token itself, and useless for finding it.
  const tokenDigest = createHash('sha256').update(`dcgate-dashboard-operator:${options.adminToken}`).digest('hex')
  const keyOf = (id: string) => `dashboard:sessions:${createHash('sha256').update(id).digest('hex')}`
  const cookieId = (event: H3Event) => {
    const id = getCookie(event, SESSION_COOKIE)
    return id && /^[\w-]{43}$/.test(id) ? id : undefined
  }
  return {
    async start(event, viewer) {
      const id = randomBytes(32).toString('base64url')
      const session: Session = {
        viewer, csrf: randomBytes(32).toString('base64url'), expiresAt: Date.now() + ttlSeconds * 1000,
        ...(viewer.kind === 'operator' ? { tokenDigest } : {}),
      }
      await storage.setItem(keyOf(id), session, { ttl: ttlSeconds })
      setCookie(event, SESSION_COOKIE, id, {
        httpOnly: true, sameSite: 'strict', path: '/dashboard', maxAge: ttlSeconds, secure: cameOverHttps(event, options.trustProxy),
      })
      return session
    },
    async read(event) {
      const id = cookieId(event)
      if (!id) return undefined
      const key = keyOf(id)
      const session = await storage.getItem<Session>(key)
      if (!session) return undefined
      if (session.expiresAt <= Date.now()) {
        await storage.removeItem(key) // the memory driver keeps expired items; Redis has dropped it already
        return undefined
      }
      // The admin token changed (another instance's config, or a restart with a new one): the operator signs in again.
      if (session.viewer.kind === 'operator' && session.tokenDigest !== tokenDigest) return undefined
      return { key, session }
    },
    async save(key, session) {
      const ttl = Math.max(1, Math.ceil((session.expiresAt - Date.now()) / 1000))
      await storage.setItem(key, session, { ttl })
    },
    async end(event) {
      const id = cookieId(event)
      if (id) await storage.removeItem(keyOf(id))
      deleteCookie(event, SESSION_COOKIE, { path: '/dashboard', httpOnly: true, sameSite: 'strict', secure: cameOverHttps(event, options.trustProxy) })
    },
  }
}

/**
 * HTTPS as the browser saw it: the request's own scheme, or, when proxies are trusted (server.trustProxy), the
 * X-Forwarded-Proto they set. A client that forges the header only makes its own cookie stricter.
 */
export function cameOverHttps(event: H3Event, trustProxy: TrustProxy): boolean {
  if (event.url.protocol === 'https:') return true
  if (trustProxy === false || trustProxy === 0) return false
  return event.req.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https'
}
