/** What the capture routes hand to the writer: rows in the shape of page_events and visits. */

export interface PageEventRow {
  id: string
  site_id: string
  session_id: string | null
  kind: 'pageview' | 'event'
  name: string | null
  url: string
  referrer: string | null
  title: string | null
  props: Record<string, unknown> | null
  /** Epoch milliseconds, as the row travels (columns.ts). */
  occurred_at: number
  received_at: number
}

/** The visit as this request saw it; merged into the stored row (counts add up, first landing page stays). */
export interface VisitRow {
  site_id: string
  session_id: string
  visitor_id: string | null
  /** Epoch milliseconds. */
  started_at: number
  ended_at: number
  ip_address: string | null
  user_agent: string | null
  country: string | null
  city: string | null
  isp: string | null
  organization: string | null
  asn: number | null
  is_vpn: boolean
  is_proxy: boolean
  is_tor: boolean
  is_hosting: boolean
  platform: string | null
  browser: string | null
  os: string | null
  is_bot: boolean
  bot_reasons: string[]
  referrer: string | null
  landing_url: string | null
  click_ids: Record<string, string>
  consent: string
  device_hash: string | null
}

/** A visit's key. */
export interface SessionKey { site_id: string, session_id: string }

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
    referrer: seen.referrer ?? row.referrer,
    landing_url: seen.landing_url ?? row.landing_url,
    click_ids: { ...seen.click_ids, ...row.click_ids },
    consent: row.consent === 'unknown' ? seen.consent : row.consent,
    visitor_id: row.visitor_id ?? seen.visitor_id,
    device_hash: row.device_hash ?? seen.device_hash,
  }
}
