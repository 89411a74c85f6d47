import { createStorage, defineDriver, type Storage } from 'unstorage'
import lruCacheDriver from 'unstorage/drivers/lru-cache'
import redisDriver from 'unstorage/drivers/redis'
import { LRUCache } from 'lru-cache'
import type { Redis } from 'ioredis'
import { createMemoryCounters, createRedisCounters, type LimitCounters } from './limit-counters.ts'
import { growingBound } from './growing-lru.ts'

/** Bound on in-memory cache entries, so a flood of random keys cannot grow memory without limit. */
const MEMORY_CACHE_ENTRIES = 100_000
/** Bound on in-memory short-lived counters under `limits:`: their own LRU, which lookups and verdicts cannot evict. */
const MEMORY_LIMIT_ENTRIES = 100_000
/** Bound on live in-memory rate-limit windows per limiter (core/limit-counters.ts: never evicted while live). */
const MEMORY_LIMIT_WINDOWS = 100_000
/** First TCP keepalive probe on the Redis connection after this much silence. */
const REDIS_KEEPALIVE_MS = 10_000

/**
 * Where short-lived counters (delivery request budgets, email lookups) live: `limits:<name>:<subject>`, written with
 * a `ttl`. In memory it is a mount of its own, bounded and honouring the ttl, so a flood of cache traffic (key
 * verdicts, email lookups) cannot evict a counter; in Redis the key expires with its ttl. The rate limits of
 * core/http/rate-limit.ts count atomically instead, through `limitCounters`.
 */
export const LIMITS_PREFIX = 'limits:'
/** Rate-limit counters in Redis: `dcgate:ratelimit:<limiter>:<subject>`, expiring with the window. */
const REDIS_RATE_LIMIT_PREFIX = 'dcgate:ratelimit:'

const countersOf = new WeakMap<Storage, LimitCounters>()

/**
 * The rate-limit counters that go with a storage: in Redis when the storage is (shared by every instance), else a
 * table in process memory apart from the cache and from `limits:` (core/limit-counters.ts). Counting is atomic in both.
 */
export function limitCounters(storage: Storage): LimitCounters {
  let counters = countersOf.get(storage)
  if (!counters) countersOf.set(storage, counters = createMemoryCounters(MEMORY_LIMIT_WINDOWS))
  return counters
}

export interface StorageOptions {
  /** Redis URL; absent keeps everything in process memory. */
  url?: string
  connectTimeoutMs: number
  commandTimeoutMs: number
}

/**
 * Caches and short-lived state. Redis when a URL is given (required for more than one instance: key
 * revocation and rate limits must be shared); otherwise process memory, with the `cache:` namespace
 * bounded by an LRU, short-lived counters under `limits:` in an LRU of their own, and rate limits apart (`limitCounters`). While Redis is unreachable,
 * commands fail within the command timeout (callers answer 500), a connection that stays silent is replaced, and
 * the outage is logged once, not on every reconnect attempt.
 */
export function createDcgateStorage(options: StorageOptions, onRedisError: (error: Error) => void = () => {}): Storage {
  if (!options.url) {
    const storage = createStorage()
    storage.mount('cache', lruCacheDriver(growingBound(MEMORY_CACHE_ENTRIES)))
    storage.mount(LIMITS_PREFIX.slice(0, -1), expiringLruDriver({ entries: MEMORY_LIMIT_ENTRIES }))
    return storage
  }
  const driver = redisDriver({
    url: options.url,
    base: 'dcgate',
    maxRetriesPerRequest: 1,
    connectTimeout: options.connectTimeoutMs,
    // Queued commands too: a command waiting for a reconnect fails after this instead of holding its request.
    commandTimeout: options.commandTimeoutMs,
    // No reply for this long while commands wait: the socket is destroyed and ioredis reconnects.
    socketTimeout: options.commandTimeoutMs,
    keepAlive: REDIS_KEEPALIVE_MS,
  })
  const client = (driver as unknown as { getInstance: () => Redis }).getInstance()
  let down = false
  client.on('error', (error: Error) => {
    if (!down) onRedisError(error)
    down = true
  })
  client.on('ready', () => {
    down = false
  })
  const storage = createStorage({ driver })
  countersOf.set(storage, createRedisCounters(client, REDIS_RATE_LIMIT_PREFIX))
  return storage
}

/** unstorage's lru-cache driver ignores `ttl`; counters must expire with their window, so this one honours it. */
const expiringLruDriver = defineDriver((options: { entries: number }) => {
  const cache = new LRUCache<string, NonNullable<unknown>>(growingBound(options.entries))
  const set = (key: string, value: unknown, ttlSeconds: unknown) => {
    const ttl = typeof ttlSeconds === 'number' && ttlSeconds > 0 ? ttlSeconds * 1000 : undefined
    cache.set(key, value as NonNullable<unknown>, ttl ? { ttl } : {})
  }
  return {
    name: 'dcgate-limits',
    hasItem: (key) => cache.has(key),
    getItem: (key) => cache.get(key) ?? null,
    getItemRaw: (key) => cache.get(key) ?? null,
    setItem: (key, value, opts) => set(key, value, opts?.ttl),
    setItemRaw: (key, value, opts) => set(key, value, opts?.ttl),
    removeItem: (key) => void cache.delete(key),
    getKeys: () => [...cache.keys()],
    clear: () => cache.clear(),
    dispose: () => cache.clear(),
  }
})
