import type { Storage } from 'unstorage'
import { LIMITS_PREFIX } from '../../core/storage.ts'

/** Under the storage's rate-limit mount (core/storage.ts), where a flood of cached lookups cannot evict a counter. */
const PREFIX = `${LIMITS_PREFIX}email-risk:lookups:`
const WINDOW_MS = 60_000

interface Window { count: number, resetAt: number }

export interface LookupLimit {
  /** Takes one network lookup (RDAP + MX of one domain) from the site's allowance for this minute: false when used up. */
  take: (siteId: string, now?: number) => Promise<boolean>
}

/**
 * At most `perMinute` network lookups per site and minute (a fixed window), counted in the shared storage (Redis
 * when configured, so instances count together; a race between two instances lets at most one extra through).
 * Within one process the takes of a site run one after another, so a burst cannot slip past the count; a site whose
 * window is known to be full is refused without a storage round trip. If the storage fails, this process counts
 * alone until it answers again: the limit still holds, per instance.
 */
export function createLookupLimit(storage: Storage, perMinute: number): LookupLimit {
  const known = new Map<string, Window>()
  const queues = new Map<string, Promise<unknown>>()

  const takeNow = async (siteId: string, now: number): Promise<boolean> => {
    const key = PREFIX + siteId
    const stored = await storage.getItem<Window>(key).catch(() => known.get(siteId) ?? null)
    const window = stored && typeof stored === 'object' && stored.resetAt > now ? stored : { count: 0, resetAt: now + WINDOW_MS }
    known.set(siteId, window)
    if (window.count >= perMinute) return false
    const next = { count: window.count + 1, resetAt: window.resetAt }
    known.set(siteId, next)
    await storage.setItem(key, next, { ttl: Math.max(1, Math.ceil((next.resetAt - now) / 1000)) }).catch(() => {})
    return true
  }

  return {
    take(siteId, now = Date.now()) {
      if (perMinute <= 0) return Promise.resolve(false)
      const seen = known.get(siteId)
      if (seen && seen.resetAt > now && seen.count >= perMinute) return Promise.resolve(false)
      const run = (queues.get(siteId) ?? Promise.resolve()).then(() => takeNow(siteId, now))
      const settled = run.catch(() => false)
      queues.set(siteId, settled)
      void settled.then(() => {
        if (queues.get(siteId) === settled) queues.delete(siteId)
      })
      return settled
    },
  }
}
