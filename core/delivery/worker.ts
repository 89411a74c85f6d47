import type { JobHandle, ScheduledJob } from '../jobs/scheduler.ts'
import type { Outbox } from './outbox.ts'

/** Rows claimed per round: enough for full platform requests, few enough to send well within the lease. */
const BATCH = 500

/**
 * The delivery worker: polls the outbox for due deliveries (retries, and anything a crashed process left claimed once
 * its lease ran out). A job of every instance (scope `instance`): the claim skips rows another worker holds, so the
 * instances share the outbox without a lease of their own.
 */
export function scheduleDeliveryWorker(
  schedule: (job: ScheduledJob) => JobHandle, outbox: Outbox, intervalMs: number, onError: (error: unknown) => void,
): JobHandle {
  return schedule({
    name: 'delivery:worker',
    everyMs: intervalMs,
    scope: 'instance',
    // As before it was a job: the first poll one interval after start.
    atStart: false,
    async run(signal) {
      try {
        while (await outbox.runDue(BATCH) === BATCH && !signal.aborted) { /* drain a backlog before sleeping */ }
      }
      catch (error) {
        // Reported as the outbox's other failures are (source `delivery`), not as a failed job.
        onError(error)
      }
    },
  })
}
