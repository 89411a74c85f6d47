import { hash, randomBytes } from 'node:crypto'
import type { RunPrepared } from '../db/prepared.ts'
import { deleteKey, findKeysByPrefix, insertKey, listSiteKeys, type KeyRow } from './queries.ts'

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

/** SHA-256 hex of the key, one-shot (asked on every request with x-dc-key). */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex')
}

/** Creates a key; the full key is in the result and nowhere else, ever again. */
export async function createKey(sql: RunPrepared, siteId: string, name: string): Promise<{ key: string, summary: KeySummary }> {
  const key = generatePrivateKey()
  const row = await insertKey(sql, { siteId, name, prefix: key.slice(0, KEY_PREFIX_LENGTH), hash: hashKey(key) })
  return { key, summary: toSummary(row) }
}

export async function listKeys(sql: RunPrepared, siteId: string): Promise<KeySummary[]> {
  return (await listSiteKeys(sql, siteId)).map(toSummary)
}

export type DeleteResult = { deleted: KeySummary & { hash: string } } | { error: 'not_found' | 'ambiguous', matches: number }

/** Deletes the one key of the site whose prefix starts with `prefix` (at least 8 characters). */
export async function deleteKeyByPrefix(sql: RunPrepared, siteId: string, prefix: string): Promise<DeleteResult> {
  const matches = await findKeysByPrefix(sql, siteId, prefix)
  if (matches.length !== 1) return { error: matches.length === 0 ? 'not_found' : 'ambiguous', matches: matches.length }
  const row = matches[0]!
  await deleteKey(sql, row.id)
  return { deleted: { ...toSummary(row), hash: row.hash } }
}

function toSummary(row: KeyRow): KeySummary {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created_at: new Date(row.created_at).toISOString(),
    last_used_at: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
  }
}
