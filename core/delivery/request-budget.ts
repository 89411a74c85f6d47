import type { Storage } from 'unstorage'
import { LIMITS_PREFIX } from '../storage.ts'

const PREFIX = `${LIMITS_PREFIX}delivery:`

interface Window { second: number, count: number }

/**
 * Requests per second to one platform account (`key`: provider and site), as the adapter's `maxRequestsPerSecond`
 * allows. Counted per one-second window in the shared storage, so with Redis the instances share the budget (two
 * instances taking the last request of a window at once may let one extra through: a platform's limit is rarely
 * that exact, and its 429 is retried). Answers 0 to go now, else the milliseconds until the next window. If the
 * storage does not answer, this process counts alone.
 */
export function createRequestBudget(storage: Storage, perSecond: (key: string) => number | undefined): (key: string) => Promise<number> {
  const known = new Map<string, Window>()
  return async (key) => {
    const limit = perSecond(key)
    if (!limit) return 0
    const now = Date.now()
    const second = Math.floor(now / 1000)
    const untilNext = 1000 - (now % 1000)
    const seen = known.get(key)
    const local = seen?.second === second ? seen.count : 0
    if (local >= limit) return untilNext
    const id = `${PREFIX}${key}:${second}`
    const stored = await storage.getItem<number>(id).catch(() => null)
    const count = Math.max(local, typeof stored === 'number' ? stored : 0)
    if (count >= limit) {
      known.set(key, { second, count })
      return untilNext
    }
    known.set(key, { second, count: count + 1 })
    await storage.setItem(id, count + 1, { ttl: 2 }).catch(() => {})
    return 0
  }
}
