/**
 * Webhook conversions that wait, stored, for a later webhook to withdraw them (SourceConversion.awaitsWithdrawalSeconds,
 * SourceWithdrawal in core/registry.ts): a Stripe PaymentIntent is sent after the wait unless an invoice_payment.paid
 * shows it paid an invoice. Webhooks arrive in any order and on any instance, so both sides meet in one row of
 * `conversion_waits` per messageId. The waiter writes `waiting` once its conversion is stored; the withdrawal writes
 * `withdrawn`. The upsert of the second writer waits for the first's row lock and returns its value, so exactly one of
 * them sees both and removes the waiting copy, in a statement of its own that sees the committed conversion.
 */
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'

/** How long a row is kept: a withdrawal that came first waits this long for its conversion. */
export const WAIT_ROW_DAYS = 30

/** $1 site, $2 messageId: the conversion just stored waits. Returns the withdrawal's reason if one came first. */
const MARK_WAITING: PreparedStatement = {
  name: 'dcgate_wait_mark',
  text: `insert into conversion_waits (site_id, message_id, waiting) values ($1, $2, true)
    on conflict (site_id, message_id) do update set waiting = true returning withdrawn`,
}

/** $1 site, $2 messageId, $3 reason. The first reason stays. Returns whether a conversion of the id is stored waiting. */
const WITHDRAW: PreparedStatement = {
  name: 'dcgate_wait_withdraw',
  text: `insert into conversion_waits (site_id, message_id, withdrawn) values ($1, $2, $3)
    on conflict (site_id, message_id) do update set withdrawn = coalesce(conversion_waits.withdrawn, excluded.withdrawn)
    returning waiting`,
}

/**
 * $1 site, $2 messageId. Deletes the waiting (trusted) conversion and its outbox rows, unless a delivery of it was
 * claimed or attempted: the wait is over then, and what was sent stays sent. The deliveries are locked first, so a
 * worker claiming them at that moment either has them (nothing is deleted) or skips them (they are deleted).
 */
const REMOVE_WAITING: PreparedStatement = {
  name: 'dcgate_wait_remove',
  text: `with target as (
      select id from conversions where site_id = $1 and message_id = $2 and trust = 'trusted'
    ), locked as (
      select d.id, d.attempts, d.status, d.locked_until from deliveries d where d.conversion_id in (select id from target) for update
    ), unsent as (
      select id from target where not exists (select 1 from locked where attempts > 0 or status not in ('pending', 'skipped') or locked_until is not null)
    ), outbox as (
      delete from deliveries where conversion_id in (select id from unsent) returning 1
    ), gone as (
      delete from conversions where id in (select id from unsent) returning id
    ), cleared as (
      update conversion_waits set waiting = false where site_id = $1 and message_id = $2 and exists (select 1 from gone) returning 1
    )
    select (select count(*) from gone)::int as removed, (select count(*) from outbox)::int as deliveries`,
}

const PURGE: PreparedStatement = {
  name: 'dcgate_wait_purge',
  text: `delete from conversion_waits where created_at < now() - make_interval(days => $1::int) returning 1 as one`,
  timeoutMs: 60_000,
}

/** After a waiting conversion is stored: the reason it is withdrawn (and now removed), or undefined while it waits. */
export async function markWaiting(prepared: RunPrepared, siteId: string, messageId: string): Promise<string | undefined> {
  const [row] = await prepared<{ withdrawn: string | null }>(MARK_WAITING, [siteId, messageId])
  if (row?.withdrawn == null) return undefined
  await removeWaiting(prepared, siteId, messageId)
  return row.withdrawn
}

/** Records a withdrawal and removes the conversion waiting under its messageId, if one is. Answers whether one was removed. */
export async function withdrawWaiting(prepared: RunPrepared, siteId: string, messageId: string, reason: string): Promise<boolean> {
  const [row] = await prepared<{ waiting: boolean }>(WITHDRAW, [siteId, messageId, reason])
  return row?.waiting === true && await removeWaiting(prepared, siteId, messageId)
}

async function removeWaiting(prepared: RunPrepared, siteId: string, messageId: string): Promise<boolean> {
  const [row] = await prepared<{ removed: number }>(REMOVE_WAITING, [siteId, messageId])
  return (row?.removed ?? 0) > 0
}

/** The periodic turn: drops rows past WAIT_ROW_DAYS. */
export async function purgeWaits(prepared: RunPrepared): Promise<number> {
  return (await prepared(PURGE, [WAIT_ROW_DAYS])).length
}
