/** The worker's sweep of inline attempts whose process died before their record (see queries/intake.ts). */
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'

/**
 * $1 at most this many conversions. A conversion whose inline attempt's lease ran out with deliveries still held
 * (`inline_until` passed: the process died mid-attempt, or the database lost the record's asynchronous commit) gets
 * them written as pending rows, with the ids the attempt used and its attempt counted, so the worker claims and sends
 * them; a delivery that has a row already (recorded after all) keeps it. Oldest lease first, on the partial index;
 * instances skip each other's conversions.
 */
const SWEEP_INLINE: PreparedStatement = {
  name: 'dcgate_sweep_inline_v1',
  reusePlan: false,
  text: `with due as (
      select id, site_id, created_at, inline_deliveries from conversions
      where inline_until < now() order by inline_until limit $1 for update skip locked
    ), written as (
      insert into deliveries (id, conversion_id, site_id, provider, status, attempts, next_attempt_at, created_at, updated_at)
      select h.id, due.id, due.site_id, h.provider, 'pending', 1, now(), due.created_at, now()
      from due cross join lateral jsonb_to_recordset(due.inline_deliveries) as h(id uuid, provider text)
      on conflict (id) do nothing
    )
    update conversions c set inline_until = null, inline_deliveries = null from due where c.id = due.id returning c.id`,
}

/** Writes the held deliveries of up to `limit` conversions whose inline lease ran out; returns how many conversions. */
export async function sweepInlineAttempts(prepared: RunPrepared, limit: number): Promise<number> {
  return (await prepared<{ id: string }>(SWEEP_INLINE, [limit])).length
}
