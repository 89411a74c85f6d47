import type { MikroORM } from '@mikro-orm/postgresql'
import type { ConsolaInstance } from 'consola'
import type { SiteConfig } from '../config/schema.ts'
import { inTransaction } from '../db/transaction.ts'
import { BootError } from '../errors.ts'
import { createSiteDirectory, type ActiveSite, type SiteDirectory } from './directory.ts'
import { generateCopKey, generateReleaseSecret } from './secrets.ts'

interface SiteRow { id: string, cop_key: string, release_secret: string }

/**
 * Makes the sites table match the config: new sites get a generated cop_key and release secret
 * (kept forever after, unless pinned in the config), changed names/status/plan are updated, and
 * sites gone from the config are marked removed (their data stays). Safe when instances boot at once:
 * the insert is idempotent and the generated keys of whichever instance inserted first win.
 */
export async function syncSites(orm: MikroORM, sites: readonly SiteConfig[], logger: ConsolaInstance): Promise<SiteDirectory> {
  const active: ActiveSite[] = []
  await inTransaction(orm, async (sql) => {
    for (const site of sites) {
      const pinned = [site.copKey ? 'cop_key = excluded.cop_key' : '', site.releaseSecret ? 'release_secret = excluded.release_secret' : ''].filter(Boolean)
      let row: SiteRow
      try {
        const rows = await sql<SiteRow[]>(
          `insert into sites (id, name, cop_key, release_secret, status, plan) values (?, ?, ?, ?, ?, ?)
           on conflict (id) do update set name = excluded.name, status = excluded.status, plan = excluded.plan,
             removed_at = null, updated_at = now()${pinned.map((p) => `, ${p}`).join('')}
           returning id, cop_key, release_secret`,
          [site.id, site.name, site.copKey ?? generateCopKey(), site.releaseSecret ?? generateReleaseSecret(), site.status, site.plan],
        )
        row = rows[0]!
      }
      catch (error) {
        if ((error as { code?: string }).code === '23505') throw new BootError(`Site "${site.id}": its copKey is already used by another site`, [], { cause: error })
        throw error
      }
      active.push({ id: site.id, name: site.name, copKey: row.cop_key, releaseSecret: row.release_secret, status: site.status, plan: site.plan, config: site })
    }
    const ids = sites.map((s) => s.id)
    const removed = await sql<{ id: string }[]>(
      `update sites set removed_at = now(), updated_at = now() where removed_at is null${ids.length ? ` and id not in (${ids.map(() => '?').join(', ')})` : ''} returning id`,
      ids,
    )
    for (const { id } of removed) logger.warn(`Site "${id}" is no longer in the config: it stops answering; its data is kept.`)
  })
  return createSiteDirectory(active)
}
