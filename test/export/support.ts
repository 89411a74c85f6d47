import { expect } from 'vitest'
import type { TestApp } from '../helpers/app.ts'
import { parseInstant } from '../../plugins/export/paging/instant.ts'

export type Sql = <T extends object[] = Record<string, unknown>[]>(text: string, params?: unknown[]) => Promise<T>

export function sqlOf(app: TestApp): Sql {
  return <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
}

export interface VisitSeed {
  id: string
  siteId: string
  /** ISO timestamp, microseconds allowed. */
  startedAt: string
  isBot?: boolean
  isVpn?: boolean
  isProxy?: boolean
  isTor?: boolean
}

export async function insertVisits(sql: Sql, rows: readonly VisitSeed[]): Promise<void> {
  if (rows.length === 0) return
  await sql(`insert into visits (id, site_id, session_id, started_at, ended_at, duration_ms, page_count, ip_address, user_agent, country, city, isp,
      organization, is_vpn, is_proxy, is_tor, platform, is_bot, bot_reasons, referrer, landing_url)
    select r.id, r.site_id, 'sess-' || r.id, r.started_at, r.started_at + interval '90 seconds', 90000, 3, '203.0.113.9', 'Mozilla/5.0 (test)', 'DE', 'Berlin',
      'Example ISP', 'Example Org', r.is_vpn, r.is_proxy, r.is_tor, 'desktop', r.is_bot,
      case when r.is_bot then '["ua_bot"]'::jsonb else '[]'::jsonb end, 'https://ref.example/', 'https://shop.example.com/'
    from json_to_recordset(?::json) as r(id uuid, site_id text, started_at timestamptz, is_bot boolean, is_vpn boolean, is_proxy boolean, is_tor boolean)`,
  [JSON.stringify(rows.map((r) => ({ id: r.id, site_id: r.siteId, started_at: r.startedAt, is_bot: r.isBot ?? false, is_vpn: r.isVpn ?? false, is_proxy: r.isProxy ?? false, is_tor: r.isTor ?? false })))])
}

export interface UserSeed { id: string, siteId: string, identifiedAt: string }

export async function insertIdentifiedUsers(sql: Sql, rows: readonly UserSeed[]): Promise<void> {
  if (rows.length === 0) return
  await sql(`insert into identified_users (id, site_id, email, email_hash, source, ip_country, ip_is_vpn, identified_at, last_seen_at)
    select r.id, r.site_id, 'u-' || r.id || '@example.com', encode(sha256(convert_to(r.id::text, 'utf8')), 'hex'), 'client_sdk', 'FR', false,
      r.identified_at, r.identified_at
    from json_to_recordset(?::json) as r(id uuid, site_id text, identified_at timestamptz)`,
  [JSON.stringify(rows.map((r) => ({ id: r.id, site_id: r.siteId, identified_at: r.identifiedAt })))])
}

export interface ConversionSeed {
  id: string
  siteId: string
  /** The deliveries' created_at (all of one conversion share it, as the pipeline writes them). */
  createdAt: string
  orderId?: string | null
  /** One delivery per entry: [provider, status]. */
  deliveries: readonly (readonly [string, string])[]
  isBot?: boolean
  consent?: string
}

export async function insertConversions(sql: Sql, rows: readonly ConversionSeed[]): Promise<void> {
  if (rows.length === 0) return
  await sql(`insert into conversions (id, site_id, message_id, source, event, standard_event, occurred_at, value, currency, order_id, channel,
      consent, is_bot, confirmation, state, source_event_type, country, content_name, content_category, session_id, user_id, created_at)
    select r.id, r.site_id, 'm-' || r.id, 'automation', 'Purchase', 'Purchase', r.created_at, 42.5, 'EUR', r.order_id, 'web',
      r.consent, r.is_bot, 'tracked', 'accepted', 'automation', 'DE', 'Blue shirt', 'Shirts', 'sess-1', 'user-1', r.created_at
    from json_to_recordset(?::json) as r(id uuid, site_id text, created_at timestamptz, order_id text, consent text, is_bot boolean)`,
  [JSON.stringify(rows.map((r) => ({ id: r.id, site_id: r.siteId, created_at: r.createdAt, order_id: r.orderId ?? null, consent: r.consent ?? 'granted', is_bot: r.isBot ?? false })))])
  const deliveries = rows.flatMap((r) => r.deliveries.map(([provider, status], i) => ({
    conversion_id: r.id, site_id: r.siteId, provider, status, created_at: r.createdAt, sent_at: status === 'sent' ? `2030-01-01T00:00:0${i}Z` : null,
  })))
  await sql(`insert into deliveries (id, conversion_id, site_id, provider, status, attempts, http_status, sent_at, created_at, next_attempt_at, updated_at)
    select gen_random_uuid(), r.conversion_id, r.site_id, r.provider, r.status, 1, case when r.status = 'sent' then 200 end, r.sent_at, r.created_at,
      -- Deliveries still in progress are not due for an hour, so the app's delivery worker leaves them as they are.
      case when r.status in ('pending', 'retrying') then r.created_at + interval '1 hour' else r.created_at end, r.created_at
    from json_to_recordset(?::json) as r(conversion_id uuid, site_id text, provider text, status text, created_at timestamptz, sent_at timestamptz)`,
  [JSON.stringify(deliveries)])
}

export interface Page {
  status: number
  body: { success: boolean, data: Record<string, unknown>[], pagination: { count: number, has_more: boolean, next_since: string | null } }
  until: string | null
}

export async function getPage(app: TestApp, key: string, path: string, params: Record<string, string | undefined>): Promise<Page> {
  const query = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined))
  const response = await app.request(`${path}?${query}`, { headers: { 'x-dc-key': key } })
  return { status: response.status, body: await response.json() as Page['body'], until: response.headers.get('x-export-until') }
}

/**
 * Follows next_since from `since` until has_more is false, checking each page's own promises on the way
 * (count, at most `limit` rows, next_since set exactly when has_more). Returns every record in order.
 */
export async function pageAll(app: TestApp, key: string, path: string, options: { since?: string, until?: string, limit?: number, maxPages?: number }): Promise<{ records: Record<string, unknown>[], pages: number }> {
  const records: Record<string, unknown>[] = []
  let since = options.since
  const cap = Math.min(500, options.limit ?? 100)
  for (let pages = 1; ; pages++) {
    const page = await getPage(app, key, path, { since, until: options.until, limit: options.limit === undefined ? undefined : String(options.limit) })
    expect(page.status, JSON.stringify(page.body)).toBe(200)
    const { data, pagination } = page.body
    expect(pagination.count).toBe(data.length)
    expect(data.length).toBeLessThanOrEqual(cap)
    expect(pagination.next_since === null).toBe(!pagination.has_more)
    if (pagination.has_more) expect(data.length).toBe(cap)
    records.push(...data)
    if (!pagination.has_more) return { records, pages }
    expect(parseInstant(pagination.next_since!), pagination.next_since!).not.toBeNull()
    expect(Number.isNaN(Date.parse(pagination.next_since!))).toBe(false)
    since = pagination.next_since!
    if (options.maxPages && pages >= options.maxPages) throw new Error(`more than ${options.maxPages} pages`)
  }
}

/** A record's position as the export orders it: (time in µs, UUID as a number). */
export function keyOf(time: string, id: string): [bigint, bigint] {
  return [parseInstant(time)!.micros, BigInt(`0x${id.replaceAll('-', '')}`)]
}

export function compareKeys(a: [bigint, bigint], b: [bigint, bigint]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0
}

/** A fixed UUID made from a number, for seeds whose ids must be spread over the whole range. */
export function uuidOf(n: bigint): string {
  const hex = n.toString(16).padStart(32, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
