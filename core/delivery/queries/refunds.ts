/**
 * Refunds and cancellations (issue 18): a shop or payment provider says an order was refunded, in part or in full,
 * or cancelled. The conversions of that order are marked; a purchase is never deleted or re-sent.
 */
import type { ConsolaInstance } from 'consola'
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'
import { callHookSafe, type DcgateHookable } from '../../hooks.ts'
import type { SourceRefund } from '../../registry.ts'

/** One refund or cancellation, as a source's map reads it from the webhook (or the automation route's body). */
export type RefundRecord = SourceRefund

/** `applied`: counted now; `repeat`: this refund id was already counted; `unknown_order`: no trusted conversion of the site has that order id (a public one does not count). */
export type RefundOutcome = 'applied' | 'repeat' | 'unknown_order'

/** What recording a refund did: its outcome and the conversions it marked now (none for a repeat or an unknown order). */
export interface RecordedRefund {
  outcome: RefundOutcome
  conversionIds: string[]
}

/**
 * $1 site, $2 order id, $3 refund id, $4 amount or null for the whole value, $5 the refund's time, $6 the amount's
 * currency or null, $7 the purchase's messageId or null. Marks every conversion of the site with that order id or
 * that messageId (the trusted purchase, and a public copy the tracking script sent for the same order: the export
 * folds them to one row and may show either), once per refund id, but only when a trusted conversion is among them:
 * anyone can post a public conversion with any order id, and a refund it claimed would never reach the real order.
 * The amount refunded so far grows by each refund, never beyond the conversion's value; a refund without an amount
 * refunds the whole value; an amount in a currency other than the conversion's adds nothing (the refund is still
 * recorded and dated). `refunded_at` keeps the first refund's time. Answers how many trusted rows the order has and
 * the ids of those marked now.
 */
const RECORD_REFUND: PreparedStatement = {
  name: 'dcgate_record_refund_v5',
  reusePlan: false,
  text: `with matched as (
      select id, trust from conversions where site_id = $1 and order_id = $2
      union select id, trust from conversions where site_id = $1 and message_id = $7::text
    ), trusted as (
      select count(*)::int as n from matched where trust = 'trusted'
    ), marked as (
      update conversions c set
        refunded_value = case
          when $4::double precision is null or c.value is null then c.value
          when $6::text is not null and c.currency is not null and upper($6::text) <> upper(c.currency) then c.refunded_value
          else least(coalesce(c.refunded_value, 0) + $4::double precision, c.value) end,
        refunded_at = least(coalesce(c.refunded_at, $5::timestamptz), $5::timestamptz),
        refund_ids = array_append(coalesce(c.refund_ids, '{}'::text[]), $3::text)
      from matched m, trusted t
      where c.id = m.id and t.n > 0 and not ($3::text = any(coalesce(c.refund_ids, '{}'::text[])))
      returning c.id
    )
    select (select n from trusted) as matched, (select coalesce(array_agg(id::text), '{}') from marked) as marked`,
}

/** Records one refund or cancellation against the site's conversions of its order. Idempotent per refund id. */
export async function recordRefund(prepared: RunPrepared, siteId: string, refund: RefundRecord): Promise<RecordedRefund> {
  const amount = amountOf(refund) ?? null
  const [row] = await prepared<{ matched: number, marked: string[] }>(RECORD_REFUND, [
    siteId, refund.orderId, refund.refundId, amount, refund.at.toISOString(), refund.currency ?? null, refund.messageId ?? null,
  ])
  if (!row || row.matched === 0) return { outcome: 'unknown_order', conversionIds: [] }
  return row.marked.length > 0 ? { outcome: 'applied', conversionIds: row.marked } : { outcome: 'repeat', conversionIds: [] }
}

/** The refund's amount when it is one (a finite amount ≥ 0); otherwise the refund counts as the whole value. */
export const amountOf = (refund: RefundRecord): number | undefined =>
  refund.amount !== undefined && Number.isFinite(refund.amount) && refund.amount >= 0 ? refund.amount : undefined

/** How the source route answers one refund; `pending_order`: kept until its order is stored (queries/pending-refunds.ts). */
export interface RefundAnswer { order_id: string, refund_id: string, outcome: RefundOutcome | 'pending_order' }

export interface RefundDeps { prepared: RunPrepared, hooks: DcgateHookable, logger: ConsolaInstance }

/**
 * Records a refund and, when it marked conversions now, tells `conversion:refunded` listeners (the platforms that
 * take adjustments), once per refund: a repeat calls nothing. Listeners run isolated, so a failing one never
 * changes the outcome.
 */
export async function applyRefund({ prepared, hooks, logger }: RefundDeps, siteId: string, refund: RefundRecord): Promise<RefundAnswer> {
  const { outcome, conversionIds } = await recordRefund(prepared, siteId, refund)
  if (outcome === 'applied') {
    await callHookSafe(hooks, logger, 'conversion:refunded', {
      siteId, orderId: refund.orderId, refundId: refund.refundId, amount: amountOf(refund), currency: refund.currency, at: refund.at, conversionIds,
    })
  }
  return { order_id: refund.orderId, refund_id: refund.refundId, outcome }
}
