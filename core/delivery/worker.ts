import type { JobHandle, ScheduledJob } from '../jobs/scheduler.ts'
import type { Outbox } from './outbox.ts'

/** Rows of platforms no longer configured claimed per round (they end failed without a request). */
const ORPHANS = 500
/** Conversions whose inline lease ran out swept per round. */
const SWEEP = 500

/**
 * The delivery worker: polls the outbox for due deliveries (retries, events a request budget left for later, and
 * anything a crashed process left claimed or held once its lease ran out). Each platform account is served by its own loop,
 * a claim of up to one full request at a time, so a platform with a small request budget never holds up another. A
 * job of every instance (scope `instance`): the claim skips rows another worker holds, so the instances share the
 * outbox without a lease of their own.
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
      // Each loop drains a backlog before sleeping. A failure is reported as the outbox's other failures are (source
      // `delivery`), not as a failed job, and stops only its own loop until the next run.
      const drain = async (claim: () => Promise<number>, full: number) => {
        try {
          while (await claim() === full && !signal.aborted) { /* the next full request */ }
        }
        catch (error) {
          onError(error)
        }
      }
      // First the deliveries a dead process's inline attempts held, so this run's claims find them as rows.
      await drain(() => outbox.sweepInline(SWEEP), SWEEP)
      await Promise.all([
        ...outbox.accounts().map((account) => drain(() => outbox.runDue(account), account.claim)),
        drain(() => outbox.runOrphans(ORPHANS), ORPHANS),
      ])
    },
  })
}
