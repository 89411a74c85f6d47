import type { Storage } from 'unstorage'

/** A value with its own expiry: the memory driver ignores unstorage's `ttl`, Redis honours it as well. */
interface Entry<T> { value: T, expiresAt: number }

export interface TtlCache<T> {
  get: (key: string) => Promise<T | undefined>
  set: (key: string, value: T, ttlSeconds: number) => Promise<void>
  /** Removes the entry (an erasure); a storage failure is passed on, so the caller can report it. */
  remove: (key: string) => Promise<void>
}

/**
 * A cache over the app's storage under `cache:email-risk:<name>:` (the LRU-bounded namespace when in memory).
 * A storage failure (Redis down) reads as a miss and a skipped write: a lookup is then simply made again.
 */
export function createTtlCache<T>(storage: Storage, name: string): TtlCache<T> {
  const prefix = `cache:email-risk:${name}:`
  return {
    async get(key) {
      const entry = await storage.getItem<Entry<T>>(prefix + key).catch(() => null)
      if (!entry || typeof entry !== 'object' || entry.expiresAt <= Date.now()) return undefined
      return entry.value
    },
    async set(key, value, ttlSeconds) {
      const entry: Entry<T> = { value, expiresAt: Date.now() + ttlSeconds * 1000 }
      await storage.setItem(prefix + key, entry, { ttl: ttlSeconds }).catch(() => {})
    },
    remove: (key) => storage.removeItem(prefix + key),
  }
}

/** Runs `load` once per key at a time: concurrent callers for the same key share the one promise. */
export function createSingleFlight<T>(): (key: string, load: () => Promise<T>) => Promise<T> {
  const running = new Map<string, Promise<T>>()
  return (key, load) => {
    const existing = running.get(key)
    if (existing) return existing
    const promise = load().finally(() => running.delete(key))
    running.set(key, promise)
    return promise
  }
}
