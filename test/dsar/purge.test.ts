import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.ts'
import { createMailer } from '../../core/mail/mailer.ts'
import { createDsarJobs } from '../../plugins/dsar/jobs.ts'
import { createDsar } from '../../plugins/dsar/service.ts'
import { startSmtp, type TestSmtp } from './smtp.ts'
import { bootDsarApp, confirmByButton, copKey, pathOf, publicRequest, seedPerson, sql } from './support.ts'

// The scheduled work: the hard purge 30 days after receipt, the end of the 24-hour key, and the retries of an
// erasure or a completion mail that failed. Each step claims its rows, so two instances never do one twice.
let app: TestApp
let smtp: TestSmtp

beforeAll(async () => {
  smtp = await startSmtp()
  app = await bootDsarApp(smtp)
})
afterAll(async () => {
  await app?.close()
  await smtp?.close()
})

/** The job as another dcgate instance runs it: its own mailer and workflow over the same database. */
function instance(mail: Partial<typeof app.dcgate.context.config.mail> = {}) {
  const ctx = app.dcgate.context
  return createDsarJobs(ctx, createDsar(ctx, createMailer({ ...ctx.config, mail: { ...ctx.config.mail, ...mail } }, ctx.logger)))
}

async function request(email: string): Promise<{ code: string, confirm: string }> {
  expect((await publicRequest(app, { email, cop_key: copKey(app, 'shop') })).status).toBe(200)
  const [mail] = await smtp.waitFor(email)
  const status = mail!.links.find((link) => link.includes('/public/dsar/status/'))!
  return { code: decodeURIComponent(status.split('/').pop()!), confirm: mail!.links.find((link) => link.includes('/public/dsar/confirm?'))! }
}

const row = async (code: string) => (await sql<Record<string, any>>(app, 'select * from deletion_requests where code = $1', [code]))[0]!
const proof = async (code: string) => (await app.request(`/public/dsar/proof/${code}`)).json() as Promise<Record<string, any>>

describe('hard purge', () => {
  it('at hard_purge_at removes what is left of the request (email, keyed hash, link), once across instances; the proof still answers', async () => {
    const unconfirmed = await request('never.clicked@example.com')
    const completed = await request('clicked@example.com')
    smtp.refuse = true
    expect((await confirmByButton(app, completed.confirm)).status).toBe(303)
    // The completion mail could not go out: the email stays, for the retry.
    await expect.poll(async () => (await proof(completed.code)).merchant_log.map((e: { event: string }) => e.event)).toContain('completion_email_failed')
    smtp.refuse = false
    expect((await row(completed.code)).email).toBe('clicked@example.com')
    expect((await row(unconfirmed.code)).email).toBe('never.clicked@example.com')

    await sql(app, `update deletion_requests set hard_purge_at = now() - interval '1 minute', received_at = now() - interval '30 days 1 minute' where code = any($1::text[])`, [[unconfirmed.code, completed.code]])
    const results = await Promise.all([instance().tick(), instance().tick()])
    expect(results.reduce((sum, r) => sum + r.purged, 0)).toBe(2)
    expect((await instance().tick()).purged).toBe(0)

    for (const { code } of [unconfirmed, completed]) {
      expect(await row(code)).toMatchObject({ email: null, email_key: null, token_hash: null, purged_at: expect.anything() })
      const record = await proof(code)
      expect(record.maskedEmail).toMatch(/^c\*\*\*@e\*\*\*\.com$|^n\*\*\*@e\*\*\*\.com$/)
      expect(record.merchant_log.filter((e: { event: string }) => e.event === 'hard_purged')).toHaveLength(1)
    }
    expect((await proof(unconfirmed.code)).status).toBe('received')
    expect((await proof(completed.code)).status).toBe('completed')
    // A purged request's link no longer works; the purge is not an erasure.
    const late = await app.request(pathOf(unconfirmed.confirm))
    expect(late.status).toBe(404)
    expect((await proof(unconfirmed.code)).merchant_log.map((e: { event: string }) => e.event)).not.toContain('erasure_started')
  })

  it('removes the keyed email hash once the 24-hour window has passed', async () => {
    const { code } = await request('window@example.com')
    await instance().tick()
    expect((await row(code)).email_key).toMatch(/^[0-9a-f]{64}$/)
    await sql(app, `update deletion_requests set received_at = now() - interval '24 hours 1 minute' where code = $1`, [code])
    await instance().tick()
    expect((await row(code)).email_key).toBeNull()
  })
})

describe('outbox expiry', () => {
  it('each round deletes outbox mails older than mail.outboxRetentionDays, SMTP configured or not', async () => {
    // Mails written before an SMTP server was configured: one from 4 days ago, one from yesterday. (Under the
    // default 7 days, so the app's own rounds leave them alone; this instance keeps mails 3 days.)
    const outbox = join(app.dataDir, 'outbox')
    mkdirSync(outbox, { recursive: true })
    const stale = join(outbox, '2026-01-01T00-00-00-000Z-00000000.eml')
    const fresh = join(outbox, '2026-01-08T00-00-00-000Z-00000001.eml')
    for (const [file, daysAgo] of [[stale, 4], [fresh, 1]] as const) {
      writeFileSync(file, 'To: someone@example.com\nSubject: old\n\nhttps://example.com/link\n', { mode: 0o600 })
      const then = new Date(Date.now() - daysAgo * 86_400_000)
      utimesSync(file, then, then)
    }
    expect((await instance({ outboxRetentionDays: 3 }).tick()).outboxExpired).toBe(1)
    expect(existsSync(stale)).toBe(false)
    // The fresh one stays, renamed under its recipient's tag so an erasure finds it.
    expect(readdirSync(outbox)).toEqual([expect.stringMatching(/^[0-9a-f]{32}-2026-01-08T00-00-00-000Z-00000001\.eml$/)])
    expect((await instance({ outboxRetentionDays: 3 }).tick()).outboxExpired).toBe(0)
  })
})

describe('retries', () => {
  it('a completion mail that failed is sent by the next round, then the email is dropped', async () => {
    const { code, confirm } = await request('retry.mail@example.com')
    smtp.refuse = true
    await confirmByButton(app, confirm)
    await expect.poll(async () => (await proof(code)).merchant_log.map((e: { event: string }) => e.event)).toContain('completion_email_failed')
    smtp.refuse = false
    await instance().tick()
    expect(smtp.to('retry.mail@example.com')).toHaveLength(1)
    await sql(app, `update deletion_requests set locked_until = now() - interval '1 second' where code = $1`, [code])
    const [first, second] = await Promise.all([instance().tick(), instance().tick()])
    expect(first!.mailed + second!.mailed).toBe(1)
    expect((await smtp.waitFor('retry.mail@example.com', 2))[1]!.subject).toBe('Your data at Shop has been deleted')
    expect(await row(code)).toMatchObject({ email: null, completion_email_sent_at: expect.anything() })
  })

  it('an erasure left in processing (a crash mid-way) runs again once its claim has run out', async () => {
    const key = await app.createKey('shop')
    await seedPerson(app, 'shop', { email: 'crashed@example.com', phone: '+1 650 253 0004', firstName: 'Crashia', lastName: 'Midway' }, key)
    const { code } = await request('crashed@example.com')
    await sql(app, `update deletion_requests set status = 'processing', processing_at = now(), locked_until = now() + interval '5 minutes' where code = $1`, [code])
    // Still claimed: nothing to retry yet.
    expect((await instance().tick()).retried).toBe(0)
    await sql(app, `update deletion_requests set locked_until = now() - interval '1 second' where code = $1`, [code])
    expect((await instance().tick()).retried).toBe(1)
    expect(await proof(code)).toMatchObject({ status: 'completed', session_records_anonymised: 2 })
    expect(await sql(app, `select count(*)::int as n from identified_users where site_id = 'shop' and email = 'crashed@example.com'`)).toEqual([{ n: 0 }])
  })
})
