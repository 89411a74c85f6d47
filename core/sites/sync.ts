import type { MikroORM } from '@mikro-orm/postgresql'
import type { ConsolaInstance } from 'consola'
import type { SiteConfig } from '../config/schema.ts'
import { inTransaction } from '../db/transaction.ts'
import { BootError } from '../errors.ts'
import { markSitesRemoved, upsertSite, type SiteRow } from './queries.ts'
import type { ActiveSite } from './directory.ts'
import { generateCopKey, generateReleaseSecret } from './secrets.ts'

/**
 * Makes the sites table match the config: new sites get a generated cop_key and release secret
 * (kept forever after, unless pinned in the config), changed names/status/plan are updated, and
 * sites gone from the config are marked removed (their data stays). Safe when instances boot at once:
 * the insert is idempotent and the generated keys of whichever instance inserted first win. The sites made in the
 * dashboard (`fromDashboard`, their ids) are synced the same way, at boot and after each change (core/sites/managed.ts).
 */
export async function syncSites(orm: MikroORM, sites: readonly SiteConfig[], logger: ConsolaInstance, fromDashboard: ReadonlySet<string> = new Set()): Promise<ActiveSite[]> {
  const active: ActiveSite[] = []
  await inTransaction(orm, async (sql) => {
    for (const site of sites) {
      let row: SiteRow
      try {
        row = await upsertSite(sql, {
          id: site.id, name: site.name, status: site.status, plan: site.plan,
          copKey: site.copKey ?? generateCopKey(), releaseSecret: site.releaseSecret ?? generateReleaseSecret(),
          pinCopKey: Boolean(site.copKey), pinReleaseSecret: Boolean(site.releaseSecret),
        })
      }
      catch (error) {
        if ((error as { code?: string }).code === '23505') throw new BootError(`Site "${site.id}": its copKey is already used by another site`, [], { cause: error })
        throw error
      }
      active.push({ id: site.id, name: site.name, copKey: row.cop_key, releaseSecret: row.release_secret, status: site.status, plan: site.plan, config: site, ...(fromDashboard.has(site.id) ? { origin: 'dashboard' as const } : {}) })
    }
    const removed = await markSitesRemoved(sql, sites.map((s) => s.id))
    for (const id of removed) logger.warn(`Site "${id}" is no longer in the config: it stops answering; its data is kept.`)
  })
  return active
}
