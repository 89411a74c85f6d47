/**
 * The Reconciliation page's figures: per UTC day, the orders dcgate received from a payment-confirmed source (a
 * verified shop or payment webhook), and per platform how many it accepted and why the others were not.
 */
import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'

export interface ReconciliationRow {
  day: string
  provider: string
  orders: number
  /** The platform took the conversion (delivery `sent`). */
  accepted: number
  /** Not sent: the visitor's consent (denied, or measurement only) or a US opt-out with consent.usPrivacy `drop`. */
  consent: number
  /** Not sent: the matched visit was ruled a bot. */
  bot: number
  /** Not sent for another reason (the platform has no event for it, nothing to match on), or never meant for it (held, unmapped). */
  skipped: number
  /** The platform refused it, or dcgate gave up retrying. */
  failed: number
  /** Not ended yet: waiting for its first attempt or a retry. */
  pending: number
}

/**
 * $1 site, $2 the payment-confirmed sources' names, $3 days, $4 platforms. Conversions that are payment-confirmed and
 * came from one of those sources (an unsigned body is only `tracked`), by the UTC day they were received; each
 * platform's conversion delivery (not refunds) read once per conversion.
 */
const RECONCILIATION: PreparedStatement = {
  name: 'dashboard_reconciliation_v2',
  reusePlan: false,
  text: `with orders as (
      select c.id, to_char(date_trunc('day', c.created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, c.is_bot, c.us_privacy ->> 'mode' as us_privacy
      from conversions c
      where c.site_id = $1 and c.confirmation = 'payment_confirmed' and c.source = any($2::text[])
        and c.created_at >= date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - make_interval(days => $3::int - 1)
    ), outcome as (
      select o.day, p.provider, p.position,
        case
          when d.status = 'sent' then 'accepted'
          when d.status in ('pending', 'retrying') then 'pending'
          when d.status = 'failed' then 'failed'
          when d.status = 'skipped' and o.is_bot then 'bot'
          when d.status = 'skipped' and (d.error ilike '%consent%' or o.us_privacy = 'drop') then 'consent'
          else 'skipped'
        end as reason
      from orders o cross join unnest($4::text[]) with ordinality as p(provider, position)
      left join lateral (
        select d.status, d.error from all_deliveries d where d.conversion_id = o.id and d.provider = p.provider and d.kind = 'conversion' limit 1
      ) d on true
    )
    select day, provider, count(*)::int as orders,
      (count(*) filter (where reason = 'accepted'))::int as accepted, (count(*) filter (where reason = 'consent'))::int as consent,
      (count(*) filter (where reason = 'bot'))::int as bot, (count(*) filter (where reason = 'skipped'))::int as skipped,
      (count(*) filter (where reason = 'failed'))::int as failed, (count(*) filter (where reason = 'pending'))::int as pending
    from outcome group by day, provider, position order by day desc, position`,
}

export function reconciliation(prepared: RunPrepared, siteId: string, sources: readonly string[], days: number, platforms: readonly string[]): Promise<ReconciliationRow[]> {
  return prepared<ReconciliationRow>(RECONCILIATION, [siteId, sources, days, platforms])
}
