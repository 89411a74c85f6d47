import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

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
  properties: {
    id: p.uuid().primary(),
    siteId: p.string().length(64),
    /** Null for a hit counted without identifiers (consent required and not given). */
    sessionId: p.string().length(128).nullable(),
    /** pageview | event */
    kind: p.string().length(16),
    name: p.string().nullable(),
    url: p.text(),
    referrer: p.text().nullable(),
    title: p.string().length(500).nullable(),
    props: p.json<Record<string, unknown>>().nullable(),
    /** The browser's clock, clamped to the receive time when it runs ahead. */
    occurredAt: p.datetime(6),
    receivedAt: p.datetime(6),
  },
})
export type IPageEvent = InferEntity<typeof PageEvent>
