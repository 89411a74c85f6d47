import { createHash, randomBytes } from 'node:crypto'
import type { Storage } from 'unstorage'
import type { RunPrepared } from '../../core/db/prepared.ts'
import { claimLink } from './queries/links.ts'

interface StoredLink { email: string, expiresAt: number }

const TOKEN_SHAPE = /^[\w-]{43}$/
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex')
const keyOf = (token: string) => `dashboard:links:${hashOf(token)}`

/**
 * One-time sign-in links: 32 random bytes in the mailed URL, only their SHA-256 in the shared storage, expiring
 * after `minutes`, removed on first use. The first use is decided by the database (claimLink), so two instances
 * opening the same link at the same moment sign in one person once.
 */
export function createLinks(storage: Storage, sql: RunPrepared, minutes: number) {
  return {
    async issue(email: string): Promise<string> {
      const token = randomBytes(32).toString('base64url')
      await storage.setItem(keyOf(token), { email, expiresAt: Date.now() + minutes * 60_000 } satisfies StoredLink, { ttl: minutes * 60 })
      return token
    },
    /** The address a live link was sent to, without using it (the page before the button). */
    async peek(token: string | null | undefined): Promise<string | undefined> {
      if (!token || !TOKEN_SHAPE.test(token)) return undefined
      const link = await storage.getItem<StoredLink>(keyOf(token))
      return link && link.expiresAt > Date.now() ? link.email : undefined
    },
    /** Uses the link: its address, once; undefined for an unknown, used or expired link. */
    async use(token: string | null | undefined): Promise<string | undefined> {
      if (!token || !TOKEN_SHAPE.test(token)) return undefined
      const key = keyOf(token)
      const link = await storage.getItem<StoredLink>(key)
      if (!link) return undefined
      await storage.removeItem(key)
      if (link.expiresAt <= Date.now()) return undefined
      return await claimLink(sql, hashOf(token)) ? link.email : undefined
    },
  }
}

export type Links = ReturnType<typeof createLinks>
