import { randomUUID } from 'node:crypto'
import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/**
 * One visit (browser session) of a site. The capture plugin fills it; intake reads it to recover click
 * ids for server-side conversions. The personal columns (email, phone, names) are erasable.
 */
export const Visit = defineEntity({
  name: 'Visit',
  tableName: 'visits',
  indexes: [
    { properties: ['siteId', 'sessionId'] },
    { properties: ['siteId', 'emailHash'] },
    { properties: ['siteId', 'startedAt', 'id'] },
  ],
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()),
    siteId: p.string().length(64),
    /** The dc_session_id the tracking script sends. */
    sessionId: p.string().length(128),
    startedAt: p.datetime(6).defaultRaw('now()').onCreate(() => new Date()),
    /** SHA-256 of the normalised email once the visitor identified; how email matching works. */
    emailHash: p.string().length(64).nullable(),
    email: p.string().nullable(),
    phone: p.string().length(64).nullable(),
    firstName: p.string().nullable(),
    lastName: p.string().nullable(),
    clickIds: p.json<Record<string, string>>().defaultRaw(`'{}'::jsonb`),
    consent: p.string().length(16).default('unknown'),
    isBot: p.boolean().default(false),
  },
})
export type IVisit = InferEntity<typeof Visit>
