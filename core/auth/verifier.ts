import type { MikroORM } from '@mikro-orm/postgresql'
import type { Storage } from 'unstorage'
import type { ActiveSite, SiteDirectory } from '../sites/directory.ts'
import { hashKey } from './keys.ts'

export interface VerifiedKey { keyId: string, site: ActiveSite }

export interface KeyVerifierOptions {
  orm: MikroORM
  /** Shared with every instance when Redis is configured, so a deletion is seen everywhere at once. */
  storage: Storage
  sites: SiteDirectory
  /** Failures of work done off the request path (last_used_at writes). */
  onBackgroundError: (error: unknown) => void
  validTtlMs?: number
  invalidTtlMs?: number
  /** How often last_used_at is written for a key that keeps being used. */
  touchIntervalMs?: number
  now?: () => number
}

export interface KeyVerifier {
  /** The key's site, or null for an unknown, deleted or malformed key. Throws when the DB or cache fails. */
  verify: (key: string) => Promise<VerifiedKey | null>
  /** Refuses a deleted key at once on every instance sharing the storage. */
  revoke: (hash: string) => Promise<void>
}

/** Cached verdict: k = key id (null: invalid), s = site id, x = expiry in ms (memory drivers ignore TTLs). */
interface CacheEntry { k: string | null, s: string | null, x: number }

const KEY_SHAPE = /^dcp_[\w-]{32,128}$/
/** A deletion racing an in-flight lookup could re-cache the key; a second revocation this much later closes that window. */
const REVOKE_AGAIN_MS = 2000

export function createKeyVerifier(options: KeyVerifierOptions): KeyVerifier {
  const { orm, storage, sites, onBackgroundError } = options
  const validTtl = options.validTtlMs ?? 5 * 60_000
  const invalidTtl = options.invalidTtlMs ?? 30_000
  const touchInterval = options.touchIntervalMs ?? 60_000
  const now = options.now ?? Date.now
  const lastTouched = new Map<string, number>()

  const cacheKey = (hash: string) => `cache:apikey:${hash}`
  const remember = (hash: string, entry: Omit<CacheEntry, 'x'>, ttlMs: number) =>
    storage.setItem<CacheEntry>(cacheKey(hash), { ...entry, x: now() + ttlMs }, { ttl: Math.ceil(ttlMs / 1000) })

  const touch = (keyId: string) => {
    const at = now()
    if (at - (lastTouched.get(keyId) ?? 0) < touchInterval) return
    lastTouched.set(keyId, at)
    orm.em.getConnection().execute('update api_keys set last_used_at = now() where id = ?', [keyId], 'run')
      .catch(onBackgroundError)
  }

  const toVerified = (keyId: string | null, siteId: string | null): VerifiedKey | null => {
    const site = keyId && siteId ? sites.byId(siteId) : undefined
    return site ? { keyId: keyId!, site } : null
  }

  return {
    async verify(key) {
      if (!KEY_SHAPE.test(key)) return null
      const hash = hashKey(key)
      const cached = await storage.getItem<CacheEntry>(cacheKey(hash))
      if (cached && cached.x > now()) {
        const verified = toVerified(cached.k, cached.s)
        if (verified) touch(verified.keyId)
        return verified
      }
      const rows = await orm.em.getConnection().execute<{ id: string, site_id: string }[]>(
        'select id, site_id from api_keys where hash = ?', [hash], 'all',
      )
      const row = rows[0]
      if (!row) {
        await remember(hash, { k: null, s: null }, invalidTtl)
        return null
      }
      await remember(hash, { k: row.id, s: row.site_id }, validTtl)
      const verified = toVerified(row.id, row.site_id)
      if (verified) touch(verified.keyId)
      return verified
    },
    async revoke(hash) {
      await remember(hash, { k: null, s: null }, invalidTtl)
      setTimeout(() => remember(hash, { k: null, s: null }, invalidTtl).catch(onBackgroundError), REVOKE_AGAIN_MS).unref()
    },
  }
}
