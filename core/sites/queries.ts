import type { TransactionSql } from '../db/transaction.ts'

export interface SiteRow { id: string, cop_key: string, release_secret: string }

export interface SiteUpsert {
  id: string, name: string, copKey: string, releaseSecret: string, status: string, plan: string
  /** The config pins the cop_key or release secret: the stored one is replaced. Else the first one stored stays. */
  pinCopKey: boolean, pinReleaseSecret: boolean
}

/** Inserts the site, or updates it (and revives it) when it exists; returns the keys it ends up with. */
export async function upsertSite(sql: TransactionSql, site: SiteUpsert): Promise<SiteRow> {
  const pinned = [site.pinCopKey ? ', cop_key = excluded.cop_key' : '', site.pinReleaseSecret ? ', release_secret = excluded.release_secret' : ''].join('')
  const [row] = await sql<SiteRow>(
    `insert into sites (id, name, cop_key, release_secret, status, plan) values ($1, $2, $3, $4, $5, $6)
     on conflict (id) do update set name = excluded.name, status = excluded.status, plan = excluded.plan,
       removed_at = null, updated_at = now()${pinned}
     returning id, cop_key, release_secret`,
    [site.id, site.name, site.copKey, site.releaseSecret, site.status, site.plan],
  )
  return row!
}

/** Marks every site not in `keep` as removed (its rows stay); returns the ids newly removed. */
export async function markSitesRemoved(sql: TransactionSql, keep: readonly string[]): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    `update sites set removed_at = now(), updated_at = now() where removed_at is null and not (id = any($1::text[])) returning id`,
    [keep],
  )
  return rows.map((row) => row.id)
}
