import { createHash, createHmac, randomBytes } from 'node:crypto'
import { inTransaction } from '../../core/db/transaction.ts'
import type { PluginContext } from '../../core/plugin.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'
import { emailKeyForm } from '../../core/identity/email.ts'
import { maskEmail } from '../../core/mail/mask.ts'
import type { MerchantLogEntry } from './entities.ts'
import { oneOff } from './queries/one-off.ts'
import * as q from './queries/requests.ts'

export const HARD_PURGE_DAYS = 30
/** One public request per email and site in this window (spec "Limits"). */
export const REPEAT_WINDOW_HOURS = 24
/** How long a claim on a request's next step lasts before another instance (or the job) may take it over. */
export const CLAIM_MINUTES = 5

export const logEntry = (event: string, extra: Omit<MerchantLogEntry, 'at' | 'event'> = {}): MerchantLogEntry => ({ at: new Date().toISOString(), event, ...extra })

/** SHA-256 hex of a confirmation token: the only form of it that is stored. */
export const tokenHash = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex')

/** Reads and moves deletion requests; every step is one conditional statement, so concurrent callers cannot repeat one. */
export function createRequestStore(ctx: PluginContext) {
  const sql = oneOff(ctx.prepared)

  /**
   * A keyed hash of the canonical email for the 24-hour limit, its domain in punycode so one mailbox has one key
   * however it was typed; keyed by the site's secret so it matches no identity hash.
   */
  const emailKey = (site: ActiveSite, email: string) => createHmac('sha256', `dcgate-dsar:${site.releaseSecret}`).update(emailKeyForm(email)).digest('hex')

  return {
    /**
     * A public request: recorded unless this email asked this site within 24 hours. Check and insert run in one
     * transaction under an advisory lock on (site, email key), so two simultaneous requests record (and mail) once.
     * Returns the new row and its confirmation token, or undefined for a repeat.
     */
    async createPublic(site: ActiveSite, email: string, pageUrl: string | undefined): Promise<{ row: q.RequestRow, token: string } | undefined> {
      const key = emailKey(site, email)
      const token = randomBytes(32).toString('base64url')
      return inTransaction(ctx.orm, async (trx) => {
        await q.lockEmailKey(trx, `dsar:${site.id}:${key}`)
        if (await q.hasRecentRequest(trx, site.id, key, REPEAT_WINDOW_HOURS)) return undefined
        const row = await q.insertPublicRequest(trx, {
          siteId: site.id, code: newCode(), email, emailKey: key, maskedEmail: maskEmail(email), tokenHash: tokenHash(token),
          pageUrl: pageUrl ?? null, hardPurgeDays: HARD_PURGE_DAYS,
          log: [logEntry('request_received', { detail: pageUrl ? `public form on ${pageUrl}` : 'public request' })],
        })
        return { row, token }
      })
    },

    /** A private (x-dc-key) request: recorded and claimed for erasure at once. */
    createPrivate: (site: ActiveSite, email: string) => q.insertPrivateRequest(sql, {
      siteId: site.id, code: newCode(), email, maskedEmail: maskEmail(email), hardPurgeDays: HARD_PURGE_DAYS,
      log: [logEntry('request_received', { detail: 'private API (x-dc-key)' })],
    }),

    byCode: (code: string) => q.findRequestByCode(sql, code),
    byToken: (token: string) => q.findRequestByTokenHash(sql, tokenHash(token)),
    byId: (id: string) => q.findRequestById(sql, id),

    /**
     * Claims the erasure: received → processing, or a processing request whose claim ran out (a crash mid-way).
     * Undefined when someone else holds it or it is done: the caller erases nothing.
     */
    claimErasure: (id: string, entries: MerchantLogEntry[]) => q.claimErasure(sql, id, CLAIM_MINUTES, entries),

    /**
     * processing → completed with the counts. A private request forgets the email now; a public one keeps it, under
     * a fresh claim, for the completion mail.
     */
    complete: (id: string, counts: { integrations: number, sessions: number }, entries: MerchantLogEntry[]) =>
      q.completeRequest(sql, id, counts, CLAIM_MINUTES, entries),

    /** Leaves the request in processing; the job tries again once `retryMinutes` have passed. */
    erasureFailed: (id: string, retryMinutes: number) =>
      q.holdRequest(sql, id, retryMinutes, [logEntry('erasure_failed', { detail: 'a data store could not be erased; retried automatically' })]),

    /** The completion mail went out: the raw email is no longer needed. */
    completionMailed: (id: string) => q.markCompletionMailed(sql, id, [logEntry('completion_email_sent')]),

    /** Logs the first failure only; the job retries once the claim has run out. */
    completionMailFailed: (id: string, retryMinutes: number) =>
      q.markCompletionMailFailed(sql, id, retryMinutes, [logEntry('completion_email_failed', { detail: 'retried until the hard purge' })]),

    /** A confirmation that never arrived must not block a new request for 24 hours: the email key goes. */
    confirmationMailed: (id: string, ok: boolean) =>
      q.markConfirmationMailed(sql, id, ok, [logEntry(ok ? 'confirmation_email_sent' : 'confirmation_email_failed')]),

    sql,
  }
}

export type RequestStore = ReturnType<typeof createRequestStore>

/** 128 random bits, URL-safe: the proof is public, so its address must not be guessable. */
function newCode(): string {
  return `dsr_${randomBytes(16).toString('base64url')}`
}
