import type { PreparedStatement, RunPrepared } from '../db/prepared.ts'
import type { TransactionSql } from '../db/transaction.ts'

/** A dashboard-made site as stored: its plain settings and its sealed sections (core/sites/managed.ts). */
export interface ManagedSiteRow { id: string, settings: Record<string, unknown>, sealed: string, created_by: string }

const LIST: PreparedStatement = {
  name: 'managed_sites_list_v1',
  text: 'select id, settings, sealed, created_by from managed_sites order by created_at, id',
}
// What changes with any insert, edit or delete of a row: every instance compares it every few seconds.
const FINGERPRINT: PreparedStatement = {
  name: 'managed_sites_fingerprint_v1',
  text: `select count(*)::text || ':' || coalesce(md5(string_agg(id || '@' || updated_at::text, ',' order by id)), '') as fingerprint from managed_sites`,
}

export function listManagedSites(sql: RunPrepared): Promise<ManagedSiteRow[]> {
  return sql<ManagedSiteRow>(LIST, [])
}

export async function managedSitesFingerprint(sql: RunPrepared): Promise<string> {
  const [row] = await sql<{ fingerprint: string }>(FINGERPRINT, [])
  return row?.fingerprint ?? ''
}

/** Inserts a new site (`create`: false when the id is taken) or replaces an existing one's settings. */
export async function writeManagedSite(sql: TransactionSql, row: ManagedSiteRow, create: boolean): Promise<boolean> {
  const written = create
    ? await sql(`insert into managed_sites (id, settings, sealed, created_by) values ($1, $2, $3, $4) on conflict (id) do nothing returning id`,
      [row.id, JSON.stringify(row.settings), row.sealed, row.created_by])
    : await sql(`update managed_sites set settings = $2, sealed = $3, updated_at = clock_timestamp() where id = $1 returning id`,
      [row.id, JSON.stringify(row.settings), row.sealed])
  return written.length === 1
}

/** Whether the `sites` table knows the id at all (a config-file site, or one removed from the config whose data stays). */
export async function siteIdTaken(sql: TransactionSql, id: string): Promise<boolean> {
  return (await sql(`select 1 from sites where id = $1`, [id])).length > 0
}
