/**
 * Webhook conversions that wait, stored, for a later webhook to withdraw them (SourceConversion.awaitsWithdrawalSeconds,
 * SourceWithdrawal in core/registry.ts): a Stripe PaymentIntent is sent after the wait unless an invoice_payment.paid
 * shows it paid an invoice. Webhooks arrive in any order, on any instance, and may be cut by a crash and retried.
 *
 * A withdrawal names the messageId and the webhook event types whose copy it withdraws, so it never touches a copy
 * another event stored under that id (a Checkout Session's). Both sides write the messageId's row of
 * `conversion_waits`: the withdrawal its types, the waiter (after its conversion is stored) a no-op update. The
 * second writer waits for the first's row lock and reads its row, so one of them always sees both; each then removes
 * the copy in a statement of its own, which sees what the other committed.
 */
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'

/** How long a withdrawal is kept for a conversion that has not arrived yet. */
export const WAIT_ROW_DAYS = 30

/** $1 site, $2 messageId: the waiter's write. Returns the event types withdrawn so far, and why. */
const TOUCH: PreparedStatement = {
  name: 'dcgate_wait_touch',
  text: `insert into conversion_waits (site_id, message_id) values ($1, $2)
    on conflict (site_id, message_id) do update set message_id = excluded.message_id returning withdrawn_types, reason`,
}

/** $1 site, $2 messageId, $3 reason (the first one stays), $4 event types, added to those already withdrawn. */
const WITHDRAW: PreparedStatement = {
  name: 'dcgate_wait_withdraw',
  text: `insert into conversion_waits (site_id, message_id, reason, withdrawn_types) values ($1, $2, $3, $4::text[])
    on conflict (site_id, message_id) do update set reason = coalesce(conversion_waits.reason, excluded.reason),
      withdrawn_types = array(select distinct unnest(conversion_waits.withdrawn_types || excluded.withdrawn_types) order by 1)
    returning 1 as one`,
}

/**
 * $1 site, $2 messageId, $3 event types. Deletes the trusted conversion of the id stored from one of those types, and
 * its outbox rows, unless a delivery of it was claimed or attempted, or an inline attempt holds some: the wait is over
 * then, and what was sent stays sent. The rows are locked first, so a worker claiming them at that moment either has them (nothing is deleted) or
 * skips them (they are deleted).
 */
const REMOVE: PreparedStatement = {
  name: 'dcgate_wait_remove_v2',
  text: `with target as (
      select id from conversions where site_id = $1 and message_id = $2 and trust = 'trusted' and source_event_type = any($3::text[])
        and inline_until is null
    ), locked as (
      select d.attempts, d.status, d.locked_until from deliveries d where d.conversion_id in (select id from target) for update
    ), unsent as (
      select id from target where not exists (select 1 from locked where attempts > 0 or status not in ('pending', 'skipped') or locked_until is not null)
    ), outbox as (
      delete from deliveries where conversion_id in (select id from unsent) returning 1
    ), gone as (
      delete from conversions where id in (select id from unsent) returning 1
    )
    select (select count(*) from gone)::int as removed, (select count(*) from outbox)::int as deliveries`,
}

const PURGE: PreparedStatement = {
  name: 'dcgate_wait_purge',
  text: `delete from conversion_waits where created_at < now() - make_interval(days => $1::int) returning 1 as one`,
  timeoutMs: 60_000,
}

/**
 * After a waiting conversion was stored (or found stored: a retry after a crash) from `eventType`: removes it when a
 * withdrawal of that type came first, and answers why; undefined while it waits (or when the id's copy is another's).
 */
export async function settleWaitingConversion(prepared: RunPrepared, siteId: string, messageId: string, eventType: string): Promise<string | undefined> {
  const [row] = await prepared<{ withdrawn_types: string[], reason: string | null }>(TOUCH, [siteId, messageId])
  if (!row?.withdrawn_types.includes(eventType)) return undefined
  return await removeWaiting(prepared, siteId, messageId, [eventType]) ? row.reason ?? 'withdrawn' : undefined
}

/** Records a withdrawal and removes the copy stored from one of `eventTypes`, if one is. Answers whether one was removed. */
export async function withdrawWaiting(prepared: RunPrepared, siteId: string, messageId: string, reason: string, eventTypes: readonly string[]): Promise<boolean> {
  await prepared(WITHDRAW, [siteId, messageId, reason, eventTypes])
  return removeWaiting(prepared, siteId, messageId, eventTypes)
}

async function removeWaiting(prepared: RunPrepared, siteId: string, messageId: string, eventTypes: readonly string[]): Promise<boolean> {
  const [row] = await prepared<{ removed: number }>(REMOVE, [siteId, messageId, eventTypes])
  return (row?.removed ?? 0) > 0
}

/** The periodic turn: drops rows past WAIT_ROW_DAYS. */
export async function purgeWaits(prepared: RunPrepared): Promise<number> {
  return (await prepared(PURGE, [WAIT_ROW_DAYS])).length
}
