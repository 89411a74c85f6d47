import type { Storage } from 'unstorage'
import { LIMITS_PREFIX } from '../storage.ts'

const PREFIX = `${LIMITS_PREFIX}delivery:`

/**
 * Requests per second to one platform account (`key`: provider and site), as the adapter's `maxRequestsPerSecond`
 * allows, spaced evenly (one request every 1000 / limit ms) rather than in bursts at the start of each second: events
 * then gather for a known, short time into the next request. The next allowed time lives in the shared storage, so
 * with Redis the instances share the budget (two instances reading the same slot at once may both take it: a
 * platform's limit is rarely that exact, and its 429 is retried). Answers 0 to go now, else the milliseconds to wait.
 * If the storage does not answer, this process spaces its own requests alone.
 */
export function createRequestBudget(storage: Storage, perSecond: (key: string) => number | undefined): (key: string) => Promise<number> {
  const known = new Map<string, number>()
  return async (key) => {
    const limit = perSecond(key)
    if (!limit || limit <= 0) return 0
    const spacing = 1000 / limit
    const now = Date.now()
    const local = known.get(key) ?? 0
    if (local > now) return Math.ceil(local - now)
    // Taken here before the storage answers, so a second call of this process in the meantime waits its turn.
    known.set(key, now + spacing)
    const id = PREFIX + key
    const stored = await storage.getItem<number>(id).catch(() => null)
    if (typeof stored === 'number' && stored > now) {
      // Another instance took this slot: the turn is after its.
      known.set(key, stored)
      return Math.ceil(stored - now)
    }
    await storage.setItem(id, now + spacing, { ttl: Math.max(1, Math.ceil(spacing / 1000) + 1) }).catch(() => {})
    return 0
  }
}
