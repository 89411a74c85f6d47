import { reportError } from '../../core/hooks.ts'
import type { PluginContext } from '../../core/plugin.ts'
import { CLAIM_MINUTES, logEntry, REPEAT_WINDOW_HOURS, type RequestRow } from './requests.ts'
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
 * The deletion requests' scheduled work, hourly and once at start. Every step claims its rows with one conditional
 * UPDATE … RETURNING, so with several instances each row is handled by exactly one of them:
 *   1. erasures left in processing whose claim ran out (a failed data store, a crash) run again;
 *   2. completion mails that failed are sent again (until the purge);
 *   3. the 24-hour keyed email hash, once its window has passed, is removed;
 *   4. the hard purge: at hard_purge_at (30 days after receipt), whatever personal data of the request remains
 *      (the raw email of a request never confirmed or whose completion mail never went out, the keyed hash, the
 *      token hash) is removed. The proof stays answerable, with the masked email.
 *   5. outbox mails (<dataDir>/outbox/, no SMTP configured) older than mail.outboxRetentionDays are deleted.
 * dcgate erases in place (rows deleted or columns cleared at once), so no soft-deleted rows wait for the purge.
 */
export function createDsarJobs(ctx: PluginContext, dsar: Dsar) {
  const run = dsar.store.run
  let timer: NodeJS.Timeout | undefined
  let running: Promise<MaintenanceResult> | undefined

  async function retryErasures(): Promise<number> {
    const due = await run<{ id: string }>(
      `select id from deletion_requests where status = 'processing' and locked_until < now() and email is not null and purged_at is null order by received_at limit ${BATCH}`,
      [],
    )
    for (const { id } of due) await dsar.erase(id, 'retry')
    return due.length
  }

  async function retryCompletionMails(): Promise<number> {
    const claimed = await run<RequestRow>(
      `update deletion_requests set locked_until = now() + make_interval(mins => $1::int)
       where id in (
         select id from deletion_requests
         where status = 'completed' and source = 'public' and email is not null and completion_email_sent_at is null
           and purged_at is null and (locked_until is null or locked_until < now())
         order by completed_at limit ${BATCH} for update skip locked)
       returning id, site_id, code, source, status, email, masked_email`,
      [CLAIM_MINUTES],
    )
    for (const row of claimed) await dsar.sendCompletion(row)
    return claimed.length
  }

  async function purge(): Promise<number> {
    await run(
      `update deletion_requests set email_key = null where email_key is not null and received_at < now() - make_interval(hours => $1::int)`,
      [REPEAT_WINDOW_HOURS],
    )
    const purged = await run<{ id: string }>(
      `update deletion_requests set email = null, email_key = null, token_hash = null, locked_until = null, purged_at = now(),
         merchant_log = merchant_log || jsonb_build_array(jsonb_build_object('at', $1::text, 'event', 'hard_purged',
           'detail', case when status = 'completed' then 'the request''s own copy of the email and its link were removed'
                          else 'never confirmed: the request''s copy of the email and its link were removed; nothing was erased' end))
       where purged_at is null and hard_purge_at <= now()
       returning id`,
      [logEntry('hard_purged').at],
    )
    if (purged.length) ctx.logger.info(`dsar: hard-purged ${purged.length} deletion request(s)`)
    return purged.length
  }

  /** Each instance sweeps its own outbox folder (files, not rows: nothing to claim). */
  async function expireOutbox(): Promise<number> {
    const expired = await dsar.sweepOutbox()
    if (expired) ctx.logger.info(`dsar: deleted ${expired} outbox mail(s) older than ${ctx.config.mail.outboxRetentionDays} day(s)`)
    return expired
  }

  /** One round of every step; rounds never overlap within an instance. */
  function tick(): Promise<MaintenanceResult> {
    running ??= (async () => {
      try {
        return { retried: await retryErasures(), mailed: await retryCompletionMails(), purged: await purge(), outboxExpired: await expireOutbox() }
      }
      finally {
        running = undefined
      }
    })()
    return running
  }

  return {
    tick,
    start() {
      const round = () => void tick().catch((error: unknown) => reportError(ctx.hooks, ctx.logger, error, { source: 'dsar:jobs' }))
      round()
      timer = setInterval(round, HOUR_MS)
      timer.unref()
    },
    async stop() {
      clearInterval(timer)
      await running?.catch(() => undefined)
    },
  }
}
