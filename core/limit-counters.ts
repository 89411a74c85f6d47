import type { Redis } from 'ioredis'

/** One attempt counted: the attempts in this window, this one included, and the milliseconds until it resets. */
export interface Counted { count: number, resetInMs: number }

/** Counts one attempt under a key, in one step that no concurrent attempt can interleave with. */
export interface LimitCounters {
  count: (key: string, windowMs: number, now: number) => Counted | Promise<Counted>
}

/**
 * INCR, and the window's expiry on the first attempt, in one script: Redis runs it atomically, so 30 parallel
 * attempts count 30, and no key is ever left without its expiry.
 */
const COUNT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl }`

/** Counters in Redis under `<prefix><key>`, shared by every instance. */
export function createRedisCounters(client: Redis, prefix: string): LimitCounters {
  return {
    async count(key, windowMs) {
      const [count, ttl] = await client.eval(COUNT_SCRIPT, 1, `${prefix}${key}`, String(windowMs)) as [number, number]
      return { count, resetInMs: ttl }
    },
  }
}

interface Window { count: number, resetAt: number }

/**
 * Counters in process memory, counted synchronously (no await between the read and the write). Each limiter (the key
 * up to its first `:`) has a table of its own holding at most `maxPerLimiter` live windows, and a live window is
 * never evicted: a flood of new subjects could otherwise push out the flooder's own counter and reopen its limit.
 * When a table is full, expired windows are swept (at most once a second); if it is still full, a new subject counts
 * as over the limit until windows expire. A flood can so deny a limited route to new subjects for one window, never
 * reopen a limit, and never touch another limiter.
 */
export function createMemoryCounters(maxPerLimiter: number): { count: (key: string, windowMs: number, now: number) => Counted } {
  const tables = new Map<string, { windows: Map<string, Window>, sweptAt: number }>()
  const sweep = (table: { windows: Map<string, Window>, sweptAt: number }, now: number) => {
    if (now - table.sweptAt < 1000) return
    table.sweptAt = now
    for (const [key, window] of table.windows) if (window.resetAt <= now) table.windows.delete(key)
  }
  return {
    count(key: string, windowMs: number, now: number): Counted {
      const limiter = key.slice(0, Math.max(0, key.indexOf(':')))
      let table = tables.get(limiter)
      if (!table) tables.set(limiter, table = { windows: new Map(), sweptAt: 0 })
      const seen = table.windows.get(key)
      if (seen && seen.resetAt > now) {
        seen.count += 1
        return { count: seen.count, resetInMs: seen.resetAt - now }
      }
      if (!seen && table.windows.size >= maxPerLimiter) sweep(table, now)
      if (!seen && table.windows.size >= maxPerLimiter) return { count: Number.POSITIVE_INFINITY, resetInMs: windowMs }
      table.windows.set(key, { count: 1, resetAt: now + windowMs })
      return { count: 1, resetInMs: windowMs }
    },
  }
}
