/**
 * A conversion's clear fields (the buyer's IP address and user agent, which platforms take unhashed) are kept while a
 * retry may need them, so a retry sends what the first attempt sent: while a delivery is still to be attempted, and
 * when one ended failed, for `delivery.retryWindowDays` after the conversion was received (the dashboard's Retry,
 * `dcgate deliveries retry`). Then they are erased, and `clear_erased_at` says when: a retry after that is refused
 * with the reason rather than sent without them. A conversion whose every delivery ended sent or skipped loses them
 * at once (queries/outbox.ts, RECORD_ATTEMPT).
 */
import type { JobHandle, ScheduledJob } from '../jobs/scheduler.ts'
import type { RunPrepared } from '../db/prepared.ts'
import { erasePastRetryWindow } from './queries/clear-fields.ts'

/** Conversions one statement erases; a run goes on until fewer are left. */
const PER_STATEMENT = 1000

/** Why a delivery whose conversion lost its clear fields is not sent again. */
export function erasedReason(erasedAt: Date | string, windowDays: number): string {
  const day = new Date(erasedAt).toISOString().slice(0, 10)
  return `not retried: the conversion's IP address and user agent were erased on ${day} (delivery.retryWindowDays: ${windowDays}); sent again it would reach the platform without them`
}

export function scheduleClearFieldErasure(
  schedule: (job: ScheduledJob) => JobHandle, prepared: RunPrepared, windowDays: number,
): JobHandle {
  return schedule({
    name: 'delivery:clear-fields',
    everyMs: 3_600_000,
    async run(signal) {
      while (!signal.aborted && await erasePastRetryWindow(prepared, windowDays, PER_STATEMENT) === PER_STATEMENT) { /* the next statement */ }
    },
  })
}
