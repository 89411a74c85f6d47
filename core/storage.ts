import { createStorage, type Storage } from 'unstorage'
import lruCacheDriver from 'unstorage/drivers/lru-cache'
import redisDriver from 'unstorage/drivers/redis'
import type { Redis } from 'ioredis'

/** Bound on in-memory cache entries, so a flood of random keys cannot grow memory without limit. */
const MEMORY_CACHE_ENTRIES = 100_000

/**
 * Caches and short-lived state. Redis when a URL is given (required for more than one instance: key
 * revocation and rate limits must be shared); otherwise process memory, with the `cache:` namespace
 * bounded by an LRU. While Redis is unreachable, commands fail fast (callers answer 500) and the
 * outage is logged once, not on every reconnect attempt.
 */
export function createDcgateStorage(url: string | undefined, onRedisError: (error: Error) => void = () => {}): Storage {
  if (!url) {
    const storage = createStorage()
    storage.mount('cache', lruCacheDriver({ max: MEMORY_CACHE_ENTRIES }))
    return storage
  }
  const driver = redisDriver({ url, base: 'dcgate', maxRetriesPerRequest: 1, connectTimeout: 2000 })
  const client = (driver as unknown as { getInstance: () => Redis }).getInstance()
  let down = false
  client.on('error', (error: Error) => {
    if (!down) onRedisError(error)
    down = true
  })
  client.on('ready', () => {
    down = false
  })
  return createStorage({ driver })
}
