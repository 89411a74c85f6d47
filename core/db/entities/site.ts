import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/** A website, synced from the config at boot. Removed sites keep their row (and data) with removedAt set. */
export const Site = defineEntity({
  name: 'Site',
  tableName: 'sites',
  properties: {
    id: p.string().primary().length(64),
    name: p.string(),
    /** Public key: appears in the script URL and page source. */
    copKey: p.string().length(64).unique(),
    /** Second secret for the qualification gate URL. */
    releaseSecret: p.string().length(128),
    status: p.string().length(16),
    plan: p.string().length(16),
    removedAt: p.datetime(6).nullable(),
    createdAt: p.datetime(6).defaultRaw('now()'),
    updatedAt: p.datetime(6).defaultRaw('now()'),
  },
})
export type ISite = InferEntity<typeof Site>
