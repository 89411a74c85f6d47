import type { RowOf } from './columns.ts'
import type { EVENT_COLUMNS, SESSION_COLUMNS, VISIT_COLUMNS } from './tables.ts'

/** What the capture routes hand to the writer: rows in the shape of page_events and visits (columns.ts). */

/** A page event; times are epoch milliseconds, as the row travels. */
export type PageEventRow = RowOf<typeof EVENT_COLUMNS>

/** The visit as this request saw it; merged into the stored row (counts add up, first landing page stays). */
export type VisitRow = RowOf<typeof VISIT_COLUMNS>

/** A visit's key. */
export type SessionKey = RowOf<typeof SESSION_COLUMNS>

export interface CaptureBatch {
  events: PageEventRow[]
  visit?: VisitRow
  /** The visitor withdrew consent: the visit keeps the refusal and loses its identifiers (applied after the upsert). */
  withdrawn?: SessionKey
}

/** Two requests of one visit in one flush as one row (one statement cannot update a row twice); `row` is the later. */
export function mergeVisit(seen: VisitRow, row: VisitRow): VisitRow {
  return {
    ...row,
    started_at: Math.min(seen.started_at, row.started_at),
    ended_at: Math.max(seen.ended_at, row.ended_at),
    // The referrer belongs to the landing page: a later page's (an SPA navigation's previous URL) is not the visit's.
    referrer: seen.landing_url ? seen.referrer : row.referrer,
    landing_url: seen.landing_url ?? row.landing_url,
    click_ids: { ...seen.click_ids, ...row.click_ids },
    consent: row.consent === 'unknown' ? seen.consent : row.consent,
    visitor_id: row.visitor_id ?? seen.visitor_id,
    device_hash: row.device_hash ?? seen.device_hash,
    gpc: Boolean(seen.gpc || row.gpc),
    consent_purposes: row.consent_purposes ?? seen.consent_purposes,
  }
}
