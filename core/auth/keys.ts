import { createHash, randomBytes } from 'node:crypto'
import type { EntityManager } from '@mikro-orm/postgresql'
import { ApiKey } from '../db/entities/api-key.ts'

export const KEY_PREFIX_LENGTH = 12

/** The public view of a key: never the key itself, never its hash. */
export interface KeySummary {
  id: string
  name: string
  prefix: string
  created_at: string
  last_used_at: string | null
}

/** `dcp_` + 32 CSPRNG bytes, base64url (43 characters). */
export function generatePrivateKey(): string {
  return `dcp_${randomBytes(32).toString('base64url')}`
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** Creates a key; the full key is in the result and nowhere else, ever again. */
export async function createKey(em: EntityManager, siteId: string, name: string): Promise<{ key: string, summary: KeySummary }> {
  const key = generatePrivateKey()
  const record = em.create(ApiKey, { site: siteId, name, prefix: key.slice(0, KEY_PREFIX_LENGTH), hash: hashKey(key) })
  await em.flush()
  return { key, summary: toSummary(record) }
}

export async function listKeys(em: EntityManager, siteId: string): Promise<KeySummary[]> {
  const records = await em.find(ApiKey, { site: siteId }, { orderBy: { createdAt: 'asc', id: 'asc' } })
  return records.map(toSummary)
}

export type DeleteResult = { deleted: KeySummary & { hash: string } } | { error: 'not_found' | 'ambiguous', matches: number }

/** Deletes the one key of the site whose prefix starts with `prefix` (at least 8 characters). */
export async function deleteKeyByPrefix(em: EntityManager, siteId: string, prefix: string): Promise<DeleteResult> {
  const matches = await em.find(ApiKey, { site: siteId, prefix: { $like: `${escapeLike(prefix)}%` } })
  if (matches.length !== 1) return { error: matches.length === 0 ? 'not_found' : 'ambiguous', matches: matches.length }
  const record = matches[0]!
  await em.remove(record).flush()
  return { deleted: { ...toSummary(record), hash: record.hash } }
}

function toSummary(record: { id: string, name: string, prefix: string, createdAt: Date, lastUsedAt?: Date | null }): KeySummary {
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    created_at: record.createdAt.toISOString(),
    last_used_at: record.lastUsedAt ? record.lastUsedAt.toISOString() : null,
  }
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`)
}
