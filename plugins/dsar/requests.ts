import { createHash, createHmac, randomBytes } from 'node:crypto'
import { inTransaction } from '../../core/db/transaction.ts'
import type { PluginContext } from '../../core/plugin.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'
import { emailKeyForm } from '../../core/identity/email.ts'
import { maskEmail } from '../../core/mail/mask.ts'
import { oneOff } from './erase/person.ts'
import type { MerchantLogEntry } from './entities.ts'

export const HARD_PURGE_DAYS = 30
/** One public request per email and site in this window (spec "Limits"). */
export const REPEAT_WINDOW_HOURS = 24
/** How long a claim on a request's next step lasts before another instance (or the job) may take it over. */
export const CLAIM_MINUTES = 5

/** A deletion_requests row as the statements here return it. */
export interface RequestRow {
  id: string
  site_id: string
  code: string
  source: 'public' | 'api'
  status: 'received' | 'processing' | 'completed'
  email: string | null
  masked_email: string
  received_at: Date
  completed_at: Date | null
  hard_purge_at: Date
  purged_at: Date | null
  integrations_affected: number
  session_records_anonymised: number
  completion_email_sent_at: Date | null
  merchant_log: MerchantLogEntry[]
}

const COLUMNS = `id, site_id, code, source, status, email, masked_email, received_at, completed_at, hard_purge_at, purged_at,
  integrations_affected, session_records_anonymised, completion_email_sent_at, merchant_log`

export const logEntry = (event: string, extra: Omit<MerchantLogEntry, 'at' | 'event'> = {}): MerchantLogEntry => ({ at: new Date().toISOString(), event, ...extra })

/** SHA-256 hex of a confirmation token: the only form of it that is stored. */
export const tokenHash = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex')

/** Reads and moves deletion requests; every step is one conditional statement, so concurrent callers cannot repeat one. */
export function createRequestStore(ctx: PluginContext) {
  const run = oneOff(ctx.prepared)

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
    async createPublic(site: ActiveSite, email: string, pageUrl: string | undefined): Promise<{ row: RequestRow, token: string } | undefined> {
      const key = emailKey(site, email)
      const token = randomBytes(32).toString('base64url')
      return inTransaction(ctx.orm, async (sql) => {
        await sql(`select pg_advisory_xact_lock(hashtextextended(?, 0))`, [`dsar:${site.id}:${key}`])
        const [recent] = await sql<{ id: string }[]>(
          `select id from deletion_requests where site_id = ? and email_key = ? and received_at > now() - make_interval(hours => ?) limit 1`,
          [site.id, key, REPEAT_WINDOW_HOURS],
        )
        if (recent) return undefined
        const [row] = await sql<RequestRow[]>(
          `insert into deletion_requests (id, site_id, code, source, status, email, email_key, masked_email, token_hash, page_url, received_at, hard_purge_at, merchant_log)
           values (gen_random_uuid(), ?, ?, 'public', 'received', ?, ?, ?, ?, ?, now(), now() + make_interval(days => ?), ?::jsonb)
           returning ${COLUMNS}`,
          [site.id, newCode(), email, key, maskEmail(email), tokenHash(token), pageUrl ?? null, HARD_PURGE_DAYS,
            JSON.stringify([logEntry('request_received', { detail: pageUrl ? `public form on ${pageUrl}` : 'public request' })])],
        )
        return { row: row!, token }
      })
    },

    /** A private (x-dc-key) request: recorded and claimed for erasure at once. */
    async createPrivate(site: ActiveSite, email: string): Promise<RequestRow> {
      const [row] = await run<RequestRow>(
        `insert into deletion_requests (id, site_id, code, source, status, email, masked_email, received_at, hard_purge_at, merchant_log)
         values (gen_random_uuid(), $1, $2, 'api', 'received', $3, $4, now(), now() + make_interval(days => $5::int), $6::jsonb)
         returning ${COLUMNS}`,
        [site.id, newCode(), email, maskEmail(email), HARD_PURGE_DAYS, JSON.stringify([logEntry('request_received', { detail: 'private API (x-dc-key)' })])],
      )
      return row!
    },

    byCode: async (code: string) => (await run<RequestRow>(`select ${COLUMNS} from deletion_requests where code = $1`, [code]))[0],
    byToken: async (token: string) => (await run<RequestRow>(`select ${COLUMNS} from deletion_requests where token_hash = $1`, [tokenHash(token)]))[0],
    byId: async (id: string) => (await run<RequestRow>(`select ${COLUMNS} from deletion_requests where id = $1`, [id]))[0],

    /**
     * Claims the erasure: received → processing, or a processing request whose claim ran out (a crash mid-way).
     * Undefined when someone else holds it or it is done: the caller erases nothing.
     */
    async claimErasure(id: string, entries: MerchantLogEntry[]): Promise<RequestRow | undefined> {
      const [row] = await run<RequestRow>(
        `update deletion_requests set status = 'processing', processing_at = coalesce(processing_at, now()),
           locked_until = now() + make_interval(mins => $2::int), merchant_log = merchant_log || $3::jsonb
         where id = $1 and email is not null and (status = 'received' or (status = 'processing' and locked_until < now()))
         returning ${COLUMNS}`,
        [id, CLAIM_MINUTES, JSON.stringify(entries)],
      )
      return row
    },

    /**
     * processing → completed with the counts. A private request forgets the email now; a public one keeps it, under
     * a fresh claim, for the completion mail.
     */
    async complete(id: string, counts: { integrations: number, sessions: number }, entries: MerchantLogEntry[]): Promise<RequestRow | undefined> {
      const [row] = await run<RequestRow>(
        `update deletion_requests set status = 'completed', completed_at = now(), integrations_affected = $2, session_records_anonymised = $3,
           email = case when source = 'api' then null else email end,
           locked_until = case when source = 'api' then null else now() + make_interval(mins => $4::int) end,
           merchant_log = merchant_log || $5::jsonb
         where id = $1 and status = 'processing'
         returning ${COLUMNS}`,
        [id, counts.integrations, counts.sessions, CLAIM_MINUTES, JSON.stringify(entries)],
      )
      return row
    },

    /** Leaves the request in processing; the job tries again once `retryMinutes` have passed. */
    async erasureFailed(id: string, retryMinutes: number): Promise<void> {
      await run(
        `update deletion_requests set locked_until = now() + make_interval(mins => $2::int), merchant_log = merchant_log || $3::jsonb where id = $1`,
        [id, retryMinutes, JSON.stringify([logEntry('erasure_failed', { detail: 'a data store could not be erased; retried automatically' })])],
      )
    },

    /** The completion mail went out: the raw email is no longer needed. */
    async completionMailed(id: string): Promise<void> {
      await run(
        `update deletion_requests set completion_email_sent_at = now(), email = null, locked_until = null, merchant_log = merchant_log || $2::jsonb
         where id = $1 and completion_email_sent_at is null`,
        [id, JSON.stringify([logEntry('completion_email_sent')])],
      )
    },

    /** Logs the first failure only; the job retries once the claim has run out. */
    async completionMailFailed(id: string, retryMinutes: number): Promise<void> {
      await run(
        `update deletion_requests set locked_until = now() + make_interval(mins => $2::int),
           merchant_log = case when merchant_log @> '[{"event":"completion_email_failed"}]' then merchant_log else merchant_log || $3::jsonb end
         where id = $1`,
        [id, retryMinutes, JSON.stringify([logEntry('completion_email_failed', { detail: 'retried until the hard purge' })])],
      )
    },

    async confirmationMailed(id: string, ok: boolean): Promise<void> {
      // A confirmation that never arrived must not block a new request for 24 hours: the email key goes.
      await run(
        `update deletion_requests set email_key = case when $2 then email_key end, merchant_log = merchant_log || $3::jsonb where id = $1`,
        [id, ok, JSON.stringify([logEntry(ok ? 'confirmation_email_sent' : 'confirmation_email_failed')])],
      )
    },

    run,
  }
}

export type RequestStore = ReturnType<typeof createRequestStore>

/** 128 random bits, URL-safe: the proof is public, so its address must not be guessable. */
function newCode(): string {
  return `dsr_${randomBytes(16).toString('base64url')}`
}
