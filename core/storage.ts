import { createStorage, type Storage } from 'unstorage'
import lruCacheDriver from 'unstorage/drivers/lru-cache'
import redisDriver from 'unstorage/drivers/redis'

/** Bound on in-memory cache entries, so a flood of random keys cannot grow memory without limit. */
const MEMORY_CACHE_ENTRIES = 100_000

/**
 * Caches and short-lived state. Redis when a URL is given (required for more than one instance: key
 * revocation and rate limits must be shared); otherwise process memory, with the `cache:` namespace
 * bounded by an LRU.
 */
export function createDcgateStorage(url: string | undefined): Storage {
  if (url) {
    return createStorage({
      driver: redisDriver({ url, base: 'dcgate', lazyConnect: false, maxRetriesPerRequest: 1, connectTimeout: 2000 }),
    })
  }
  const storage = createStorage()
  storage.mount('cache', lruCacheDriver({ max: MEMORY_CACHE_ENTRIES }))
  return storage
}
