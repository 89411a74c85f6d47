import type { Storage } from 'unstorage'
import { sha256Hex } from '../../../core/identity/hash.ts'
import { createTtlCache } from '../cache.ts'
import { mailboxOf, shapeOf } from './local-part.ts'

/** Spellings of one mailbox (plus tags, Gmail dots) before the next one counts as minted aliases. */
export const ALIAS_LIMIT = 3
/** Addresses of one numbered shape (anna.k7, anna.k8…) within NUMBERED_WINDOW_MS before the next one counts as scripted. */
export const NUMBERED_LIMIT = 5
const NUMBERED_WINDOW_MS = 10 * 60_000
const KEEP_SECONDS = 24 * 3600
const KEEP_ENTRIES = 20

interface Seen { address: string, mailbox: string, at: number }

export interface ShapeCounter {
  /** Records `address` for the site and tells whether it repeats a pattern of recent checks: minted aliases or a numbered series. */
  record: (siteId: string, local: string, domain: string) => Promise<boolean>
  /** Drops the address's entry (an erasure), and the whole key when it was the only one. */
  forget: (siteId: string, local: string, domain: string) => Promise<void>
}

/**
 * The site-wide part of the bulk pattern: recent addresses of the same shape, kept in the storage (shared through
 * Redis between instances) as SHA-256 digests only, for a day. Read-modify-write without a lock: two instances
 * racing may each miss the other's entry, which only delays the flag by one check.
 */
export function createShapeCounter(storage: Storage): ShapeCounter {
  const cache = createTtlCache<Seen[]>(storage, 'shape')
  const keyOf = (siteId: string, mailbox: string) => sha256Hex(`${siteId}\n${shapeOf(mailbox)}`)
  return {
    async record(siteId, local, domain) {
      const mailbox = mailboxOf(local, domain)
      const key = keyOf(siteId, mailbox)
      const now = Date.now()
      const entry: Seen = { address: sha256Hex(`${local}@${domain}`), mailbox: sha256Hex(mailbox), at: now }
      const seen = ((await cache.get(key)) ?? []).filter((s) => now - s.at < KEEP_SECONDS * 1000 && s.address !== entry.address)
      const aliases = seen.filter((s) => s.mailbox === entry.mailbox).length + 1
      const numbered = /\d/.test(mailbox) ? seen.filter((s) => now - s.at < NUMBERED_WINDOW_MS).length + 1 : 0
      await cache.set(key, [...seen, entry].slice(-KEEP_ENTRIES), KEEP_SECONDS)
      return aliases > ALIAS_LIMIT || numbered > NUMBERED_LIMIT
    },
    async forget(siteId, local, domain) {
      const key = keyOf(siteId, mailboxOf(local, domain))
      const address = sha256Hex(`${local}@${domain}`)
      const seen = (await cache.get(key)) ?? []
      const others = seen.filter((s) => s.address !== address)
      if (seen.length > 0 && others.length === seen.length) return
      // Removed first (a failing storage throws here, so the erasure reports it), then the others are put back.
      await cache.remove(key)
      if (others.length > 0) await cache.set(key, others, KEEP_SECONDS)
    },
  }
}
