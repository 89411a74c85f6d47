import { defineEntity, type InferEntity } from '@mikro-orm/core'
import { entityProperties } from './store/columns.ts'
import { EVENT_COLUMNS, IDENTIFIED_USER_COLUMNS, IDENTIFIED_USER_COMPUTED_COLUMNS } from './store/tables.ts'

/**
 * The tables capture owns, their properties made from the column lists that also write them (store/tables.ts).
 * Both are written only by SQL (queries.ts); the entities describe them for the migrations. Visits belong to core:
 * the delivery pipeline reads them too.
 */

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
