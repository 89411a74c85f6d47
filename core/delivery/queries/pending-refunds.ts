/**
 * Refunds that arrive before their order (a refund webhook delivered first, or a shop connected after the sale):
 * kept in `pending_refunds` and applied, with recordRefund's rules and the `conversion:refunded` hook, once a
 * conversion of the order is stored. Kept 30 days at most (docs/api/sources.md, "Refunds and cancellations").
 */
import type { PreparedStatement } from '../../db/prepared.ts'
import { amountOf, applyRefund, type RefundAnswer, type RefundDeps, type RefundRecord } from './refunds.ts'

/** How long a refund waits for its order before the purge job drops it. */
export const PENDING_REFUND_DAYS = 30
/** Pending refunds one reconciliation turn applies at most; the next turn takes the rest. */
const PER_TURN = 200

const COLUMNS = 'site_id, order_id, refund_id, message_id, amount, currency, refunded_at'
interface PendingRow { site_id: string, order_id: string, refund_id: string, message_id: string | null, amount: number | null, currency: string | null, refunded_at: Date | string }

const KEEP: PreparedStatement = {
  name: 'dcgate_keep_pending_refund',
  text: `insert into pending_refunds (${COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7) on conflict do nothing`,
}
/** $1 site, $2 order ids, $3 messageIds: the pending refunds of conversions just stored. */
const OF_ORDERS: PreparedStatement = {
  name: 'dcgate_pending_refunds_of_orders',
  text: `select ${COLUMNS} from pending_refunds where site_id = $1 and (order_id = any($2::text[]) or message_id = any($3::text[]))
    order by created_at limit ${PER_TURN}`,
}
/**
 * Pending refunds whose order has been stored since by a trusted route (a signed webhook, the automation route): a
 * public conversion (the tracking script, an unsigned body) with the order id does not take the refund (refunds.ts).
 */
const MATCHED: PreparedStatement = {
  name: 'dcgate_pending_refunds_matched_v2',
  reusePlan: false,
  text: `select ${COLUMNS} from pending_refunds p
    where exists (select 1 from conversions c where c.site_id = p.site_id and c.order_id = p.order_id and c.trust = 'trusted')
       or (p.message_id is not null and exists (select 1 from conversions c where c.site_id = p.site_id and c.message_id = p.message_id and c.trust = 'trusted'))
    order by p.created_at limit ${PER_TURN}`,
}
const DROP: PreparedStatement = {
  name: 'dcgate_drop_pending_refund',
  text: 'delete from pending_refunds where site_id = $1 and order_id = $2 and refund_id = $3',
}
const PURGE: PreparedStatement = {
  name: 'dcgate_purge_pending_refunds',
  text: `delete from pending_refunds where created_at < now() - make_interval(days => $1::int) returning 1 as one`,
  timeoutMs: 60_000,
}

/**
 * What the source route does with a refund (signed sources only): record it (applyRefund), or, when the site has no
 * trusted conversion of its order yet, keep it for when the order arrives (`pending_order`; a repeat of a pending refund is kept once).
 */
export async function acceptRefund(deps: RefundDeps, siteId: string, refund: RefundRecord): Promise<RefundAnswer> {
  const answer = await applyRefund(deps, siteId, refund)
  if (answer.outcome !== 'unknown_order') return answer
  const currency = refund.currency && /^[A-Z]{3}$/.test(refund.currency) ? refund.currency : null
  await deps.prepared(KEEP, [siteId, refund.orderId, refund.refundId, refund.messageId ?? null, amountOf(refund) ?? null, currency, refund.at.toISOString()])
  return { ...answer, outcome: 'pending_order' }
}

/** After conversions are stored: applies the site's pending refunds of their order ids or messageIds. Answers how many. */
export async function applyPendingRefundsOf(deps: RefundDeps, siteId: string, orderIds: readonly string[], messageIds: readonly string[]): Promise<number> {
  if (orderIds.length === 0 && messageIds.length === 0) return 0
  return applyRows(deps, await deps.prepared<PendingRow>(OF_ORDERS, [siteId, orderIds, messageIds]))
}

/** The periodic turn: applies pending refunds whose order was stored meanwhile, then drops those past 30 days. */
export async function reconcilePendingRefunds(deps: RefundDeps): Promise<{ applied: number, purged: number }> {
  const applied = await applyRows(deps, await deps.prepared<PendingRow>(MATCHED, []))
  const purged = await deps.prepared(PURGE, [PENDING_REFUND_DAYS])
  return { applied, purged: purged.length }
}

/** Each row applied as it would have been on arrival, then dropped; one whose order is still missing stays. */
async function applyRows(deps: RefundDeps, rows: readonly PendingRow[]): Promise<number> {
  let applied = 0
  for (const row of rows) {
    const answer = await applyRefund(deps, row.site_id, {
      orderId: row.order_id, refundId: row.refund_id, messageId: row.message_id ?? undefined,
      amount: row.amount ?? undefined, currency: row.currency ?? undefined, at: new Date(row.refunded_at),
    })
    if (answer.outcome === 'unknown_order') continue
    if (answer.outcome === 'applied') applied++
    await deps.prepared(DROP, [row.site_id, row.order_id, row.refund_id])
  }
  return applied
}
