import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/**
 * A site made in the dashboard rather than the config file (core/sites/managed.ts). Every instance reads the table
 * again within seconds of a change; the site's keys stay in `sites`, like a config-file site's.
 */
export const ManagedSite = defineEntity({
  name: 'ManagedSite',
  tableName: 'managed_sites',
  properties: {
    id: p.string().primary().length(64),
    /** The settings that hold no secret, as a config file writes them: name, domains, events, members… */
    settings: p.json<Record<string, unknown>>(),
    /** `destinations`, `crm`, `sources` and `capture` as one sealed JSON text: they hold tokens and signing secrets. */
    sealed: p.text(),
    /** Who made it ("operator" or a member's address). */
    createdBy: p.string().length(320),
    createdAt: p.datetime(6).defaultRaw('now()'),
    /** Changed with every edit: the instances notice a change by it. */
    updatedAt: p.datetime(6).defaultRaw('now()'),
  },
})
export type IManagedSite = InferEntity<typeof ManagedSite>
