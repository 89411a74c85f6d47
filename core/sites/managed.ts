import type { MikroORM } from '@mikro-orm/postgresql'
import type { ConsolaInstance } from 'consola'
import * as v from 'valibot'
import { formatIssues } from '../config/issues.ts'
import { SiteSchema, type SiteConfig } from '../config/schema.ts'
import type { RunPrepared } from '../db/prepared.ts'
import type { TransactionSql } from '../db/transaction.ts'
import type { Registry } from '../registry.ts'
import type { Keyring } from '../secrets/keyring.ts'
import { createSiteDirectory, type ActiveSite, type SiteDirectory } from './directory.ts'
import { listManagedSites, managedSitesFingerprint, siteIdTaken, writeManagedSite, type ManagedSiteRow } from './managed-queries.ts'
import { upsertSite } from './queries.ts'
import { generateCopKey, generateReleaseSecret } from './secrets.ts'
import { syncSites } from './sync.ts'

/** A site as a config file writes it (the input of SiteSchema), without the keys dcgate keeps in `sites`. */
export type SiteInput = Record<string, unknown> & { id: string }

/** The sections that hold tokens and signing secrets: stored sealed, never in clear. */
const SEALED_SECTIONS = ['destinations', 'crm', 'sources', 'capture'] as const
/** Kept in `sites` (generated once), never in a dashboard-made site's settings. */
const KEPT_ELSEWHERE = ['copKey', 'releaseSecret']

export type SaveOutcome = { ok: true, site: ActiveSite } | { ok: false, problems: string[] }

/**
 * Sites made and edited in the dashboard, stored in `managed_sites` and applied live: the instance that saves one
 * applies it at once, every other instance within `POLL_MS` (it compares the table's fingerprint). Config-file sites
 * are read-only here; a dashboard site whose id a config-file site takes is ignored (the file wins).
 */
export interface ManagedSites {
  /** A dashboard-made site as stored (secrets opened), as a config file would write it; undefined for any other id. */
  read: (id: string) => Promise<SiteInput | undefined>
  /**
   * Validates `input` with the config loader's schemas and the adapters' option schemas; problems are the loader's
   * `path: message` lines, paths relative to the site (`members[0]: must be an email address…`). Saved and applied
   * only when there is none. `create` refuses an id already used; otherwise the site must be a dashboard-made one.
   */
  save: (input: SiteInput, actor: string, mode: 'create' | 'update') => Promise<SaveOutcome>
  /** Reads the table again when it changed since the last look, and applies it (the poll; tests call it too). */
  refresh: () => Promise<void>
}

export const POLL_MS = 2000

export interface ManagedSitesDeps {
  orm: MikroORM
  prepared: RunPrepared
  keyring: Keyring
  registry: Registry
  configSites: readonly SiteConfig[]
  logger: ConsolaInstance
}

/** Syncs the config file's sites and the dashboard's at boot; answers the live directory and the service that edits it. */
export async function openSites(deps: ManagedSitesDeps): Promise<{ sites: SiteDirectory, managed: ManagedSites }> {
  const { orm, prepared, keyring, registry, configSites, logger } = deps
  const configIds = new Set(configSites.map((site) => site.id))
  const place = (id: string) => `managed_sites:${id}`
  const directory = createSiteDirectory([])
  let fingerprint: string | undefined
  let applied: string[] = []

  const inputOf = (row: ManagedSiteRow): SiteInput | undefined => {
    const opened = keyring.open('site-config', row.sealed, place(row.id))
    if (opened === undefined) return undefined
    return { id: row.id, ...row.settings, ...(JSON.parse(opened) as Record<string, unknown>) }
  }

  const check = (input: unknown): string[] => {
    const result = v.safeParse(SiteSchema, input)
    if (!result.success) return formatIssues(result.issues)
    return registry.checkSite(result.output, '')
  }

  /** The stored sites that still validate (a later version may be stricter: such a site is skipped, with a warning). */
  const usable = (rows: readonly ManagedSiteRow[]): SiteConfig[] => rows.flatMap((row) => {
    if (configIds.has(row.id)) {
      logger.warn(`The dashboard's site "${row.id}" is ignored: the config file defines a site with this id`)
      return []
    }
    const input = inputOf(row)
    if (!input) {
      logger.warn(`The dashboard's site "${row.id}" does not open with the server secret or a previous one; it is not used`)
      return []
    }
    const problems = check(input)
    if (problems.length > 0) {
      logger.warn(`The dashboard's site "${row.id}" is not used: ${problems.join('; ')}`)
      return []
    }
    return [v.parse(SiteSchema, input)]
  })

  // Single statements, no transaction: PGlite shared over a socket (tests of several instances) has one session.
  const sql: TransactionSql = (text, values) => prepared({ name: 'managed_sites_adhoc', text, reusePlan: false }, values)
  let fromConfig: ActiveSite[] = []

  /** A dashboard site's keys: generated (and kept in `sites`) the first time any instance applies it. */
  const activate = async (site: SiteConfig): Promise<ActiveSite> => {
    const row = await upsertSite(sql, {
      id: site.id, name: site.name, status: site.status, plan: site.plan, copKey: generateCopKey(), releaseSecret: generateReleaseSecret(),
      pinCopKey: false, pinReleaseSecret: false,
    })
    return { id: site.id, name: site.name, copKey: row.cop_key, releaseSecret: row.release_secret, status: site.status, plan: site.plan, config: site, origin: 'dashboard' }
  }

  const apply = async (managed: readonly SiteConfig[]) => {
    const ids = managed.map((site) => site.id)
    registry.configureSites(managed, applied.filter((id) => !ids.includes(id)))
    const active: ActiveSite[] = []
    for (const site of managed) active.push(await activate(site))
    directory.replace([...fromConfig, ...active])
    applied = ids
  }

  // One look at a time: a save's own refresh and the poll never apply two versions out of order.
  let queue: Promise<void> = Promise.resolve()
  const refresh = () => (queue = queue.catch(() => {}).then(async () => {
    const now = await managedSitesFingerprint(prepared)
    if (now === fingerprint) return
    await apply(usable(await listManagedSites(prepared)))
    fingerprint = now
  }))

  // At boot, in the one transaction that also marks the sites gone from both as removed.
  fingerprint = await managedSitesFingerprint(prepared)
  const atBoot = usable(await listManagedSites(prepared))
  const synced = await syncSites(orm, [...configSites, ...atBoot], logger, new Set(atBoot.map((site) => site.id)))
  fromConfig = synced.filter((site) => site.origin !== 'dashboard')
  registry.configureSites(atBoot)
  directory.replace(synced)
  applied = atBoot.map((site) => site.id)

  const managed: ManagedSites = {
    async read(id) {
      if (configIds.has(id)) return undefined
      const row = (await listManagedSites(prepared)).find((r) => r.id === id)
      return row && inputOf(row)
    },
    async save(raw, actor, mode) {
      const input = Object.fromEntries(Object.entries(raw).filter(([key]) => !KEPT_ELSEWHERE.includes(key))) as SiteInput
      const problems = check(input)
      if (problems.length > 0) return { ok: false, problems }
      const id = input.id
      if (configIds.has(id)) return { ok: false, problems: ['id: this site is managed in the config file'] }
      const sections = Object.fromEntries(SEALED_SECTIONS.flatMap((key) => (input[key] === undefined ? [] : [[key, input[key]]])))
      const settings = Object.fromEntries(Object.entries(input).filter(([key]) => key !== 'id' && !(SEALED_SECTIONS as readonly string[]).includes(key)))
      const row: ManagedSiteRow = { id, settings, sealed: keyring.seal('site-config', JSON.stringify(sections), place(id)), created_by: actor.slice(0, 320) }
      const taken = mode === 'create' && await siteIdTaken(sql, id)
      if (taken || !await writeManagedSite(sql, row, mode === 'create')) {
        return { ok: false, problems: [mode === 'create' ? 'id: is taken by another site (or was, and its data is kept)' : 'id: no site made in the dashboard has this id'] }
      }
      await refresh()
      const active = directory.byId(id)
      return active ? { ok: true, site: active } : { ok: false, problems: ['id: the site was saved but could not be applied; see the server log'] }
    },
    refresh,
  }
  return { sites: directory, managed }
}
