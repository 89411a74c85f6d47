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
export interface RequestBudget {
  /** Takes one request: 0 to go now, else the milliseconds until the next window. */
  take: (key: string) => Promise<number>
  /** When this process already knows the current window used up (no storage round trip), the ms until the next; else 0. */
  spent: (key: string) => number
}

export function createRequestBudget(storage: Storage, perSecond: (key: string) => number | undefined): RequestBudget {
  const known = new Map<string, Window>()
  const spent = (key: string) => {
    const limit = perSecond(key)
    const seen = known.get(key)
    const now = Date.now()
    return limit && seen && seen.second === Math.floor(now / 1000) && seen.count >= limit ? 1000 - (now % 1000) : 0
  }
  const take = async (key: string): Promise<number> => {
    const limit = perSecond(key)
    if (!limit) return 0
    const now = Date.now()
    const second = Math.floor(now / 1000)
    const untilNext = 1000 - (now % 1000)
    const seen = known.get(key)
    const local = seen?.second === second ? seen.count : 0
    if (local >= limit) return untilNext
    // Taken here before the storage answers, so another call of this process meanwhile counts it.
    known.set(key, { second, count: local + 1 })
    const id = `${PREFIX}${key}:${second}`
    const stored = await storage.getItem<number>(id).catch(() => null)
    const count = Math.max(local, typeof stored === 'number' ? stored : 0)
    if (count >= limit) {
      // Other instances used this window up: the local take is given back.
      known.set(key, { second, count: limit })
      return untilNext
    }
    known.set(key, { second, count: Math.max(count + 1, known.get(key)?.second === second ? known.get(key)!.count : 0) })
    // Counted per calendar second, as the platforms count: a burst within the allowance goes at once, and under
    // sustained load the events gather into the next window's requests (an inline attempt leaves them to the worker).
    await storage.setItem(id, count + 1, { ttl: 2 }).catch(() => {})
    return 0
  }
  return { take, spent }
}
