/** The delivery report and its replay (admin API, `dcgate deliveries`). Not hot: planned on every call. */
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'
import { erasedReason } from '../clear-fields.ts'

/**
 * $1 site, $2 a status or null for all, $3 at most this many. One row per conversion per platform, newest first,
 * with what the export of validated conversions reports for it. `has_consent` is true only for an explicit grant
 * from the visitor's consent banner; a server-side conversion with no matched visit has no consent signal (false),
 * and a denied one is never delivered. `us_privacy` is the site's `consent.usPrivacy` that applied to a person who
 * opted out under a US state law (`off`, `limited` or `drop`), null when none did (no opt-out, or not in the US).
 * `consent_rule` says which consent decided (core/consent/purposes.ts): `conversion` (its own context.consent), `visit` (a
 * matched visit's purposes), `visit-choice` (a visit's one-bit banner choice) or `none`; `consent_purposes` is that consent.
 * `kind` is `adjustment` for a refund told to the platform (with `refund_id`, `adjustment_type` retraction or
 * restatement, and `adjusted_value` for a restatement); `note` says which rule shaped a request when it was not the
 * usual one (a lead qualified after the platform's event window); `diagnosis` what the platform said later about a
 * request it took (core/delivery/diagnostics.ts: Google's requestStatus), null where it says nothing later.
 */
const LIST_DELIVERIES: PreparedStatement = {
  name: 'dcgate_list_deliveries_v5',
  reusePlan: false,
  text: `select d.id, d.id as delivery_id, c.message_id, c.event, c.standard_event, d.provider, d.status, d.attempts, d.http_status, d.error,
      d.last_duration_ms, d.next_attempt_at, d.sent_at, d.created_at, d.updated_at,
      c.source, c.source_event_type, c.confirmation, c.order_id, c.value, c.currency, c.country,
      c.consent = 'granted' as has_consent, c.session_id, c.user_id, c.content_name, c.content_category,
      c.us_privacy ->> 'mode' as us_privacy, c.consent_purposes ->> 'rule' as consent_rule, c.consent_purposes -> 'purposes' as consent_purposes, d.kind, d.refund_id, d.adjustment ->> 'type' as adjustment_type,
      (d.adjustment ->> 'value')::double precision as adjusted_value, d.note,
      (select g.diagnosis from delivery_diagnostics g where g.delivery_id = d.id) as diagnosis
    from all_deliveries d join conversions c on c.id = d.conversion_id
    where d.site_id = $1 and ($2::text is null or d.status = $2) order by d.created_at desc, d.id desc limit $3`,
}

export function listDeliveries(prepared: RunPrepared, siteId: string, status: string | undefined, limit: number): Promise<Record<string, unknown>[]> {
  return prepared<Record<string, unknown>>(LIST_DELIVERIES, [siteId, status ?? null, limit])
}

/** Which failed deliveries a replay takes; every field optional (the dashboard's filter). */
export interface ReplayFilter {
  provider?: string
  event?: string
  /** Created at or after this instant (ISO). */
  from?: string
  /** Created before this instant (ISO). */
  to?: string
}

/**
 * $1 site, $2 one delivery id or null for every failed one, $3 platform, $4 event, $5/$6 created from/before (each null
 * for any). Sets failed deliveries due again, attempts from zero; not those whose conversion's clear fields were erased
 * (core/delivery/clear-fields.ts), which it returns with the time of the erasure. A refund needs no clear field.
 */
const REQUEUE_FAILED: PreparedStatement = {
  name: 'dcgate_requeue_failed_v3',
  reusePlan: false,
  text: `with f as (
      select d.id, case when d.kind = 'adjustment' then null else c.clear_erased_at end as erased_at
      from deliveries d join conversions c on c.id = d.conversion_id
      where d.site_id = $1 and d.status = 'failed' and ($2::uuid is null or d.id = $2) and ($3::text is null or d.provider = $3)
        and ($4::text is null or c.event = $4)
        and d.created_at >= coalesce($5::timestamptz, '-infinity') and d.created_at < coalesce($6::timestamptz, 'infinity')
    ), u as (
      update deliveries d set status = 'retrying', attempts = 0, next_attempt_at = now(), locked_until = null, updated_at = now()
      from f where d.id = f.id and f.erased_at is null and d.status = 'failed'
      returning d.id
    )
    select f.id, f.erased_at, exists (select 1 from u where u.id = f.id) as requeued from f`,
}

export interface Replay {
  requeued: string[]
  /** Failed deliveries not retried, with why (their conversion's clear fields were erased). */
  refused: { id: string, reason: string }[]
}

export async function requeueFailed(prepared: RunPrepared, siteId: string, id: string | undefined, filter: ReplayFilter, windowDays: number): Promise<Replay> {
  const rows = await prepared<{ id: string, erased_at: Date | string | null, requeued: boolean }>(REQUEUE_FAILED, [siteId, id ?? null, filter.provider ?? null, filter.event ?? null, filter.from ?? null, filter.to ?? null])
  return {
    requeued: rows.filter((r) => r.requeued).map((r) => r.id),
    refused: rows.flatMap((r) => (r.erased_at ? [{ id: r.id, reason: erasedReason(r.erased_at, windowDays) }] : [])),
  }
}
