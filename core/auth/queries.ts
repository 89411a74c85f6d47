import type { PreparedStatement, RunPrepared } from '../db/prepared.ts'

/** An api_keys row as the admin statements return it. */
export interface KeyRow { id: string, name: string, prefix: string, hash: string, created_at: Date, last_used_at: Date | null }

const COLUMNS = 'id, name, prefix, hash, created_at, last_used_at'

const FIND_BY_HASH: PreparedStatement = { name: 'dcgate_key_by_hash_v1', text: 'select id, site_id from api_keys where hash = $1' }
const TOUCH: PreparedStatement = { name: 'dcgate_key_touch_v1', text: 'update api_keys set last_used_at = now() where id = $1' }
const INSERT: PreparedStatement = {
  name: 'dcgate_key_insert_v1',
  text: `insert into api_keys (id, site_id, name, prefix, hash, created_at) values (gen_random_uuid(), $1, $2, $3, $4, now()) returning ${COLUMNS}`,
}
const LIST: PreparedStatement = { name: 'dcgate_key_list_v1', text: `select ${COLUMNS} from api_keys where site_id = $1 order by created_at, id` }
const FIND_BY_PREFIX: PreparedStatement = {
  name: 'dcgate_key_by_prefix_v1',
  text: `select ${COLUMNS} from api_keys where site_id = $1 and prefix like $2 escape '\\'`,
}
const DELETE: PreparedStatement = { name: 'dcgate_key_delete_v1', text: 'delete from api_keys where id = $1' }

/** The key's id and site, by the SHA-256 of the full key (the verifier's lookup on a cache miss). */
export async function findKeyByHash(sql: RunPrepared, hash: string): Promise<{ id: string, site_id: string } | undefined> {
  return (await sql<{ id: string, site_id: string }>(FIND_BY_HASH, [hash]))[0]
}

export async function touchKey(sql: RunPrepared, id: string): Promise<void> {
  await sql(TOUCH, [id])
}

export async function insertKey(sql: RunPrepared, key: { siteId: string, name: string, prefix: string, hash: string }): Promise<KeyRow> {
  const [row] = await sql<KeyRow>(INSERT, [key.siteId, key.name, key.prefix, key.hash])
  return row!
}

export function listSiteKeys(sql: RunPrepared, siteId: string): Promise<KeyRow[]> {
  return sql<KeyRow>(LIST, [siteId])
}

/** The site's keys whose prefix starts with `start` (taken literally: LIKE's wildcards are escaped). */
export function findKeysByPrefix(sql: RunPrepared, siteId: string, start: string): Promise<KeyRow[]> {
  return sql<KeyRow>(FIND_BY_PREFIX, [siteId, `${start.replace(/[\\%_]/g, (c) => `\\${c}`)}%`])
}

export async function deleteKey(sql: RunPrepared, id: string): Promise<void> {
  await sql(DELETE, [id])
}
