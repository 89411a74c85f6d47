import { LRUCache } from 'lru-cache'
import type { RunPrepared } from '../db/prepared.ts'
import type { Storage } from 'unstorage'
import type { ActiveSite, SiteDirectory } from '../sites/directory.ts'
import { hashKey } from './keys.ts'
import { findKeyByHash, touchKey } from './queries.ts'
import { growingBound } from '../growing-lru.ts'

export interface VerifiedKey { keyId: string, site: ActiveSite }

export interface KeyVerifierOptions {
  prepared: RunPrepared
  sites: SiteDirectory
  /**
   * Redis-backed storage shared by every instance: verdicts are cached there, so a deletion is seen
   * everywhere at once. Without it (one instance) verdicts live in an in-process LRU, read synchronously.
   */
  shared?: Storage
  /** Failures of work done off the request path (last_used_at writes). */
  onBackgroundError: (error: unknown) => void
  validTtlMs?: number
  invalidTtlMs?: number
  /** How often last_used_at is written for a key that keeps being used. */
  touchIntervalMs?: number
  now?: () => number
}

export interface KeyVerifier {
  /**
   * The cached verdict, without any I/O: the site, null for a refused key, or undefined when only
   * `verify` can tell (not cached, or the cache is shared). Keeps the hot path free of promises.
   */
  peek: (key: string) => VerifiedKey | null | undefined
  /** The key's site, or null for an unknown, deleted or malformed key. Throws when the DB or cache fails. */
  verify: (key: string) => Promise<VerifiedKey | null>
  /** Refuses a deleted key at once (on every instance sharing the storage). */
  revoke: (hash: string) => Promise<void>
}

/** Cached verdict: k = key id (null: invalid), s = site id, x = expiry in ms (memory caches ignore TTLs). */
interface CacheEntry { k: string | null, s: string | null, x: number }

const KEY_SHAPE = /^dcp_[\w-]{32,128}$/
/** Bound on in-process verdicts, so a flood of random keys cannot grow memory without limit. */
const LOCAL_ENTRIES = 100_000
/** A deletion racing an in-flight lookup could re-cache the key; a second revocation this much later closes that window. */
const REVOKE_AGAIN_MS = 2000

export function createKeyVerifier(options: KeyVerifierOptions): KeyVerifier {
  const { prepared, sites, shared, onBackgroundError } = options
  const validTtl = options.validTtlMs ?? 5 * 60_000
  const invalidTtl = options.invalidTtlMs ?? 30_000
  const touchInterval = options.touchIntervalMs ?? 60_000
  const now = options.now ?? Date.now
  const lastTouched = new Map<string, number>()
  const local = shared ? undefined : new LRUCache<string, CacheEntry>(growingBound(LOCAL_ENTRIES))

  const read = async (hash: string) => (local ? local.get(hash) : await shared!.getItem<CacheEntry>(`cache:apikey:${hash}`))
  const remember = async (hash: string, entry: Omit<CacheEntry, 'x'>, ttlMs: number) => {
    const value = { ...entry, x: now() + ttlMs }
    if (local) local.set(hash, value)
    else await shared!.setItem<CacheEntry>(`cache:apikey:${hash}`, value, { ttl: Math.ceil(ttlMs / 1000) })
  }

  const touch = (keyId: string) => {
    const at = now()
    if (at - (lastTouched.get(keyId) ?? 0) < touchInterval) return
    lastTouched.set(keyId, at)
    touchKey(prepared, keyId).catch(onBackgroundError)
  }

  /** The verdict an unexpired entry gives; a key whose site left the config is refused. */
  const fromEntry = (entry: CacheEntry): VerifiedKey | null => {
    const site = entry.k && entry.s ? sites.byId(entry.s) : undefined
    if (!site) return null
    touch(entry.k!)
    return { keyId: entry.k!, site }
  }

  return {
    peek(key) {
      if (!KEY_SHAPE.test(key)) return null
      if (!local) return undefined
      const entry = local.get(hashKey(key))
      return entry && entry.x > now() ? fromEntry(entry) : undefined
    },
    async verify(key) {
      if (!KEY_SHAPE.test(key)) return null
      const hash = hashKey(key)
      const cached = await read(hash)
      if (cached && cached.x > now()) return fromEntry(cached)
      const row = await findKeyByHash(prepared, hash)
      const entry = { k: row?.id ?? null, s: row?.site_id ?? null }
      await remember(hash, entry, entry.k ? validTtl : invalidTtl)
      return fromEntry({ ...entry, x: Number.POSITIVE_INFINITY })
    },
    async revoke(hash) {
      await remember(hash, { k: null, s: null }, invalidTtl)
      setTimeout(() => remember(hash, { k: null, s: null }, invalidTtl).catch(onBackgroundError), REVOKE_AGAIN_MS).unref()
    },
  }
}
