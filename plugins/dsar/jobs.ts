import type { PluginContext } from '../../core/plugin.ts'
import { claimCompletionMails, findStalledErasures, forgetEmailKeys, hardPurgeRequests } from './queries/requests.ts'
import { CLAIM_MINUTES, logEntry, REPEAT_WINDOW_HOURS } from './requests.ts'
import type { Dsar } from './service.ts'

const HOUR_MS = 3_600_000
const BATCH = 50

export interface MaintenanceResult {
  /** Requests whose erasure was tried again (stuck in processing after a failure or crash). */
  retried: number
  /** Completion mails tried again. */
  mailed: number
  /** Requests hard-purged. */
  purged: number
  /** Outbox mails deleted because they passed mail.outboxRetentionDays. */
  outboxExpired: number
}

/**
 * The deletion requests' scheduled work, hourly and once at start. Steps 1-4 run as one cluster job (one instance
 * an hour); each also claims its rows with one conditional UPDATE … RETURNING, so two instances running it at once
 * still handle each row once:
 *   1. erasures left in processing whose claim ran out (a failed data store, a crash) run again;
 *   2. completion mails that failed are sent again (until the purge);
 *   3. the 24-hour keyed email hash, once its window has passed, is removed;
 *   4. the hard purge: at hard_purge_at (30 days after receipt), whatever personal data of the request remains
 *      (the raw email of a request never confirmed or whose completion mail never went out, the keyed hash, the
 *      token hash) is removed. The proof stays answerable, with the masked email.
 *   5. outbox mails (<dataDir>/outbox/, no SMTP configured) older than mail.outboxRetentionDays are deleted, by
 *      every instance in its own data dir (an instance job).
 * dcgate erases in place (rows deleted or columns cleared at once), so no soft-deleted rows wait for the purge.
 */
export function createDsarJobs(ctx: PluginContext, dsar: Dsar) {
  const sql = dsar.store.sql

  async function retryErasures(): Promise<number> {
    const due = await findStalledErasures(sql, BATCH)
    for (const id of due) await dsar.erase(id, 'retry')
    return due.length
  }

  async function retryCompletionMails(): Promise<number> {
    const claimed = await claimCompletionMails(sql, CLAIM_MINUTES, BATCH)
    for (const row of claimed) await dsar.sendCompletion(row)
    return claimed.length
  }

  async function purge(): Promise<number> {
    await forgetEmailKeys(sql, REPEAT_WINDOW_HOURS)
    const purged = await hardPurgeRequests(sql, logEntry('hard_purged').at)
    if (purged) ctx.logger.info(`dsar: hard-purged ${purged} deletion request(s)`)
    return purged
  }

  /** Each instance sweeps its own outbox folder (files, not rows: nothing to claim). */
  async function expireOutbox(): Promise<number> {
    const expired = await dsar.sweepOutbox()
    if (expired) ctx.logger.info(`dsar: deleted ${expired} outbox mail(s) older than ${ctx.config.mail.outboxRetentionDays} day(s)`)
    return expired
  }

  /** Steps 1-4: the requests' rows. */
  const requests = async () => ({ retried: await retryErasures(), mailed: await retryCompletionMails(), purged: await purge() })

  return {
    requests,
    expireOutbox,
    /** One round of every step, as both jobs run them (tests: another instance's round). */
    tick: async (): Promise<MaintenanceResult> => ({ ...await requests(), outboxExpired: await expireOutbox() }),
  }
}

/** Runs the jobs hourly from app:ready (core/jobs/scheduler.ts stops and awaits them at app:close). */
export function scheduleDsarJobs(ctx: PluginContext, dsar: Dsar) {
  const jobs = createDsarJobs(ctx, dsar)
  return {
    requests: ctx.schedule({ name: 'dsar:requests', everyMs: HOUR_MS, run: jobs.requests }),
    outbox: ctx.schedule({ name: 'dsar:outbox-retention', everyMs: HOUR_MS, scope: 'instance', run: jobs.expireOutbox }),
  }
}
