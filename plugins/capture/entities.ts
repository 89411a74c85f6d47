import { defineEntity, type InferEntity } from '@mikro-orm/core'
import { entityProperties } from './store/columns.ts'
import {
  EVENT_COLUMNS, IDENTIFIED_USER_COLUMNS, IDENTIFIED_USER_COMPUTED_COLUMNS, VISIT_COLUMNS, VISIT_COMPUTED_COLUMNS, VISIT_IDENTITY_COLUMNS,
} from './store/tables.ts'

/**
 * The tables capture owns, their properties made from the column lists that also write them (store/tables.ts).
 * They are written only by SQL (queries.ts); the entities describe them for the migrations, which are one list for
 * every plugin, so the tables exist whichever plugins run.
 */

/**
 * One visit (browser session) of a site: capture writes it in batches, intake and the delivery pipeline read it
 * (by SQL, core/delivery/queries) to recover click ids and the bot/consent verdict for server-side conversions.
 * The personal columns (ip, user agent, email, phone, names, device hash) are erasable; the rest describes the
 * visit, not the person.
 */
export const Visit = defineEntity({
  name: 'Visit',
  tableName: 'visits',
  uniques: [{ properties: ['siteId', 'sessionId'] }],
  indexes: [
    { properties: ['siteId', 'emailHash'] },
    // Conversion matching and erasure find a visit by any identity it was given; only identified visits are indexed.
    { name: 'visits_email_hashes_index', expression: 'create index "visits_email_hashes_index" on "visits" using gin ("email_hashes") where "email_hashes" is not null' },
    { properties: ['siteId', 'startedAt', 'id'] },
    // The export's detection lists page over these visits only (plugins/export): one range scan per page however rare they are.
    { name: 'visits_bot_paging_index', expression: 'create index "visits_bot_paging_index" on "visits" ("site_id", "started_at", "id") where "is_bot"' },
    { name: 'visits_vpn_proxy_paging_index', expression: 'create index "visits_vpn_proxy_paging_index" on "visits" ("site_id", "started_at", "id") where "is_vpn" or "is_proxy" or "is_tor"' },
  ],
  properties: entityProperties(VISIT_COMPUTED_COLUMNS, VISIT_COLUMNS, VISIT_IDENTITY_COLUMNS),
})
export type IVisit = InferEntity<typeof Visit>

/**
 * A page view or an event the tracking script sent, per visit. `id` is made when the hit is received, so a
 * batch written twice (a replayed capture journal) inserts each hit once. No personal data: URLs and event
 * properties as the page sent them.
 */
export const PageEvent = defineEntity({
  name: 'PageEvent',
  tableName: 'page_events',
  indexes: [
    { properties: ['siteId', 'receivedAt', 'id'] },
    { properties: ['siteId', 'sessionId'] },
  ],
  properties: entityProperties(EVENT_COLUMNS),
})
export type IPageEvent = InferEntity<typeof PageEvent>

/**
 * A person a site identified by email (dcutils.identifyUser or a mapped form), one row per site and email.
 * The email is kept in clear because the export of identified users lists it; it is erasable (DSAR).
 */
export const IdentifiedUser = defineEntity({
  name: 'IdentifiedUser',
  tableName: 'identified_users',
  uniques: [{ properties: ['siteId', 'emailHash'] }],
  // (siteId, lastSeenAt): the capture retention deletes those not seen for a while.
  indexes: [{ properties: ['siteId', 'identifiedAt', 'id'] }, { properties: ['siteId', 'deviceHash'] }, { properties: ['siteId', 'lastSeenAt'] }],
  properties: entityProperties(IDENTIFIED_USER_COMPUTED_COLUMNS, IDENTIFIED_USER_COLUMNS),
})
export type IIdentifiedUser = InferEntity<typeof IdentifiedUser>
