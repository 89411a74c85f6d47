import { createHash, randomBytes } from 'node:crypto'
import type { EntityManager } from '@mikro-orm/postgresql'

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

interface KeyRow { id: string, name: string, prefix: string, hash: string, created_at: Date, last_used_at: Date | null }

const COLUMNS = 'id, name, prefix, hash, created_at, last_used_at'

// Plain SQL, not the unit of work: em.flush() runs an AsyncLocalStorage, which on Node 20 slows every request after
// it (see core/db/transaction.ts).
const sql = (em: EntityManager, text: string, params: unknown[]) => em.getConnection().execute<KeyRow[]>(text, params, 'all')

/** Creates a key; the full key is in the result and nowhere else, ever again. */
export async function createKey(em: EntityManager, siteId: string, name: string): Promise<{ key: string, summary: KeySummary }> {
  const key = generatePrivateKey()
  const [row] = await sql(em, `insert into api_keys (id, site_id, name, prefix, hash, created_at) values (gen_random_uuid(), ?, ?, ?, ?, now()) returning ${COLUMNS}`,
    [siteId, name, key.slice(0, KEY_PREFIX_LENGTH), hashKey(key)])
  return { key, summary: toSummary(row!) }
}

export async function listKeys(em: EntityManager, siteId: string): Promise<KeySummary[]> {
  const rows = await sql(em, `select ${COLUMNS} from api_keys where site_id = ? order by created_at, id`, [siteId])
  return rows.map(toSummary)
}

export type DeleteResult = { deleted: KeySummary & { hash: string } } | { error: 'not_found' | 'ambiguous', matches: number }

/** Deletes the one key of the site whose prefix starts with `prefix` (at least 8 characters). */
export async function deleteKeyByPrefix(em: EntityManager, siteId: string, prefix: string): Promise<DeleteResult> {
  const matches = await sql(em, `select ${COLUMNS} from api_keys where site_id = ? and prefix like ? escape '\\'`, [siteId, `${escapeLike(prefix)}%`])
  if (matches.length !== 1) return { error: matches.length === 0 ? 'not_found' : 'ambiguous', matches: matches.length }
  const row = matches[0]!
  await sql(em, 'delete from api_keys where id = ?', [row.id])
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

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`)
}
