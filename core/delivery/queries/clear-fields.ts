/** The erasure of a conversion's clear fields (IP address, user agent, clear traits) once no retry can need them: clear-fields.ts. */
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'

/**
 * $1 the retry window in days, $2 at most this many conversions. Erases the clear fields of conversions received
 * longer ago than the window, none of whose deliveries is still to be attempted (a failed one may be retried only
 * within the window), not held (a held lead is delivered when released), and with no inline attempt under way. Oldest
 * first, on the partial index.
 */
const ERASE_PAST_WINDOW: PreparedStatement = {
  name: 'dcgate_erase_clear_fields_v2',
  reusePlan: false,
  text: `with due as (
      select c.id from conversions c
      where (c.ip is not null or c.user_agent is not null or c.clear_traits is not null) and c.created_at < now() - make_interval(days => $1::int)
        and c.state <> 'held' and c.inline_until is null
        and not exists (select 1 from deliveries d where d.conversion_id = c.id and d.status in ('pending', 'retrying'))
      order by c.created_at limit $2
    )
    update conversions c set ip = null, user_agent = null, clear_traits = null, clear_erased_at = now() from due where c.id = due.id
    returning c.id`,
}

/** Erases up to `limit` conversions' clear fields past the window; returns how many. */
export async function erasePastRetryWindow(prepared: RunPrepared, windowDays: number, limit: number): Promise<number> {
  return (await prepared<{ id: string }>(ERASE_PAST_WINDOW, [windowDays, limit])).length
}
