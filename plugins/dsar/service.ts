import { callHookSafe } from '../../core/hooks.ts'
import { sha256Hex } from '../../core/identity/hash.ts'
import type { Mailer } from '../../core/mail/mailer.ts'
import type { PluginContext } from '../../core/plugin.ts'
import { metrics } from '../../core/metrics/registry.ts'
import type { EraseRequest } from './erase/person.ts'
import { startTally } from './erase/tally.ts'
import { completionMail, confirmationMail } from './mails.ts'
import { countHeldConversions } from './queries/erase.ts'
import type { RequestRow } from './queries/requests.ts'
import { createRequestStore, logEntry } from './requests.ts'

/** After a failed erasure or mail, the job tries again once this has passed. */
const RETRY_MINUTES = 10

export type ErasureOutcome = 'completed' | 'busy' | 'failed'

/**
 * The deletion workflow shared by the routes and the job: recording, mailing, erasing through `dsar:erase`, and
 * the proof. Mails go out in the background (the public answer must not depend on them); close() waits for them.
 */
export function createDsar(ctx: PluginContext, mailer: Mailer) {
  const store = createRequestStore(ctx)
  const base = (ctx.config.server.statusBaseUrl ?? ctx.config.server.baseUrl ?? `http://localhost:${ctx.config.server.port}`).replace(/\/+$/, '')
  const pending = new Set<Promise<void>>()
  const siteName = (siteId: string) => ctx.sites.byId(siteId)?.name ?? siteId

  const statusUrl = (code: string) => `${base}/public/dsar/status/${encodeURIComponent(code)}`
  const confirmUrl = (token: string) => `${base}/public/dsar/confirm?token=${encodeURIComponent(token)}`

  function background(source: string, task: () => Promise<void>): void {
    const running: Promise<void> = task()
      .catch((error: unknown) => ctx.report(error, { source }))
      .finally(() => pending.delete(running))
    pending.add(running)
  }

  async function sendConfirmation(row: RequestRow, token: string): Promise<void> {
    try {
      await mailer.send(confirmationMail(row.email!, siteName(row.site_id), confirmUrl(token), statusUrl(row.code), row.code))
    }
    catch (error) {
      ctx.logger.warn(`dsar: the confirmation mail for request ${row.code} could not be sent (${mailer.description}): ${error instanceof Error ? error.message : String(error)}`)
      await store.confirmationMailed(row.id, false)
      return
    }
    await store.confirmationMailed(row.id, true)
  }

  async function sendCompletion(row: RequestRow): Promise<void> {
    try {
      await mailer.send(completionMail(row.email!, siteName(row.site_id), statusUrl(row.code), row.code))
    }
    catch (error) {
      ctx.logger.warn(`dsar: the completion mail for request ${row.code} could not be sent (${mailer.description}); retried later: ${error instanceof Error ? error.message : String(error)}`)
      await store.completionMailFailed(row.id, RETRY_MINUTES)
      return
    }
    await store.completionMailed(row.id)
  }

  /**
   * Runs the erasure of one request, once: the claim lets exactly one caller through. Every plugin erases its own
   * data in its `dsar:erase` listener; the dsar plugin's listeners count what they erased. Held conversions belong
   * to the release plugin, so they are counted here, before and after.
   */
  async function erase(id: string, how: 'confirmed' | 'api' | 'retry'): Promise<ErasureOutcome> {
    const row = await store.claimErasure(id, [...(how === 'confirmed' ? [logEntry('confirmed')] : []), logEntry('erasure_started', how === 'retry' ? { detail: 'retry' } : {})])
    if (!row) return (await store.byId(id))?.status === 'completed' ? 'completed' : 'busy'
    const request: EraseRequest = { siteId: row.site_id, email: row.email!, emailHash: sha256Hex(row.email!) }
    const tally = startTally(request)
    const held = () => countHeldConversions(store.sql, request.siteId, request.email, request.emailHash)
    const heldBefore = await held()
    const ok = await callHookSafe(ctx.hooks, ctx.logger, 'dsar:erase', request)
    const heldErased = heldBefore - await held()
    if (heldErased > 0) tally.held_conversions = heldErased
    if (!ok) {
      await store.erasureFailed(id, RETRY_MINUTES)
      return 'failed'
    }
    const areas = Object.entries(tally).filter(([, records]) => records > 0)
    const completed = await store.complete(id, { integrations: areas.length, sessions: tally.visits ?? 0 }, [
      ...areas.map(([area, records]) => logEntry('erased', { detail: area, records })),
      logEntry('erasure_completed', { detail: areas.length ? `${areas.length} data store(s) held data of this email` : 'no data of this email was held' }),
    ])
    if (completed?.source === 'public' && completed.email) background('dsar:completion-mail', () => sendCompletion(completed))
    return 'completed'
  }

  return {
    store,
    statusUrl,
    erase: (id: string, how: 'confirmed' | 'api' | 'retry'): Promise<ErasureOutcome> => erase(id, how).then((outcome) => {
      metrics.erasures.inc({ outcome })
      return outcome
    }),
    siteName,
    /** Mails the confirmation of a newly recorded public request, in the background. */
    confirm: (row: RequestRow, token: string) => background('dsar:confirmation-mail', () => sendConfirmation(row, token)),
    /** Retries a completion mail the job claimed. */
    sendCompletion,
    /** Deletes expired outbox mails (the job, hourly). */
    sweepOutbox: () => mailer.sweepOutbox(),
    /** Waits for every mail under way (app:close, tests). */
    async settle(): Promise<void> {
      while (pending.size) await Promise.all([...pending])
    },
  }
}

export type Dsar = ReturnType<typeof createDsar>
