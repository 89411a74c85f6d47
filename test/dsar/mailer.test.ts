import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createConsola } from 'consola'
import { createMailer, MailAddressError } from '../../core/mail/mailer.ts'
import { maskEmail } from '../../core/mail/mask.ts'
import { outboxMails } from '../helpers/outbox.ts'
import { tempDir } from '../helpers/server-process.ts'
import type { TestApp } from '../helpers/app.ts'
import { startSmtp } from './smtp.ts'
import { bootDsarApp, confirmByButton, copKey, publicRequest } from './support.ts'

// core/mail: SMTP when mail.smtp is set; otherwise .eml files in <dataDir>/outbox and a log line, so the
// embedded default works end to end.
const apps: TestApp[] = []
afterAll(async () => {
  for (const app of apps) await app.close()
})

function quiet() {
  const lines: string[] = []
  const logger = createConsola({ level: 3, reporters: [{ log: (entry) => void lines.push(entry.args.map(String).join(' ')) }] })
  return { logger, lines }
}

describe('createMailer', () => {
  it('sends through the configured SMTP server', async () => {
    const smtp = await startSmtp()
    const { logger } = quiet()
    const mailer = createMailer({ mail: { smtp: smtp.url, from: 'dcgate <no-reply@shop.example>' }, dataDir: tempDir() }, logger)
    await mailer.send({ to: 'someone@example.com', subject: 'Hello', text: 'Plain body https://example.com/x', html: '<p>HTML body</p>' })
    const [mail] = await smtp.waitFor('someone@example.com')
    expect(mail).toMatchObject({ from: 'no-reply@shop.example', subject: 'Hello' })
    expect(mail!.decoded).toContain('Plain body')
    expect(mail!.decoded).toContain('<p>HTML body</p>')
    expect(mailer.description).toBe(smtp.url)
    mailer.close()
    await smtp.close()
  })

  it('rejects when the SMTP server refuses or cannot be reached', async () => {
    const smtp = await startSmtp()
    smtp.refuse = true
    const { logger } = quiet()
    const refusing = createMailer({ mail: { smtp: smtp.url, from: 'a@b.example' }, dataDir: tempDir() }, logger)
    await expect(refusing.send({ to: 'x@example.com', subject: 's', text: 't' })).rejects.toThrow(/Mailbox unavailable/)
    await smtp.close()
    await expect(refusing.send({ to: 'x@example.com', subject: 's', text: 't' })).rejects.toThrow()
  })

  it('without mail.smtp, writes an .eml file to <dataDir>/outbox (owner-only), to the canonical address, and logs it without the address', async () => {
    const dataDir = tempDir()
    const { logger, lines } = quiet()
    const mailer = createMailer({ mail: { from: 'dcgate <no-reply@localhost>' }, dataDir }, logger)
    const sent = await mailer.send({ to: ' Reader@Example.com ', subject: 'Outbox test', text: 'Open https://example.com/link' })
    const files = readdirSync(join(dataDir, 'outbox'))
    expect(files).toHaveLength(1)
    expect(sent.outboxFile).toBe(join(dataDir, 'outbox', files[0]!))
    // The name tells nothing about the person: a keyed hash of the recipient, a time, a random part.
    expect(files[0]).toMatch(/^[0-9a-f]{32}-\d{4}-\d\d-\d\dT[\d-]+Z-[0-9a-f]{8}\.eml$/)
    expect(statSync(sent.outboxFile!).mode & 0o777).toBe(0o600)
    expect(statSync(join(dataDir, 'outbox.key')).mode & 0o777).toBe(0o600)
    const eml = readFileSync(sent.outboxFile!, 'utf8')
    expect(eml).toMatch(/^To: reader@example\.com$/m)
    expect(eml).toMatch(/^Subject: Outbox test$/m)
    expect(eml).toContain('https://example.com/link')
    expect(lines.join('\n')).toContain(`mail "Outbox test" to r***@e***.com written to ${sent.outboxFile}`)
    expect(lines.join('\n')).not.toMatch(/reader@/i)
  })

  it('writes the outbox text part so a long link reads whole (8bit, not quoted-printable)', async () => {
    const dataDir = tempDir()
    const { logger } = quiet()
    const mailer = createMailer({ mail: { from: 'dcgate <no-reply@localhost>' }, dataDir }, logger)
    const link = `http://localhost:3000/api/v1/dsar/confirm/${'Ab0_-'.repeat(12)}?site=demo&lang=en`
    const sent = await mailer.send({ to: 'reader@example.com', subject: 'Confirm', text: `Hello Grüße,\n\nConfirm: ${link}\n`, html: `<p><a href="${link}">Confirm</a></p>` })
    const eml = readFileSync(sent.outboxFile!, 'utf8')
    expect(eml).toContain(`Confirm: ${link}\n`)
    expect(eml).toContain('Hello Grüße,')
    expect(eml).toMatch(/^Content-Transfer-Encoding: 8bit$/m)
  })

  it('sends nothing to a recipient that is not one mailbox', async () => {
    const smtp = await startSmtp()
    const dataDir = tempDir()
    const { logger } = quiet()
    for (const config of [{ mail: { smtp: smtp.url, from: 'a@b.example' }, dataDir }, { mail: { from: 'a@b.example' }, dataDir }]) {
      const mailer = createMailer(config, logger)
      for (const to of ['victim@example.com, root@example.com', '"Prize" <victim@example.com>', 'victim@example.com\r\nBcc: x@example.com']) {
        await expect(mailer.send({ to, subject: 's', text: 't' }), to).rejects.toBeInstanceOf(MailAddressError)
      }
      mailer.close()
    }
    expect(smtp.messages).toEqual([])
    expect(readdirSync(dataDir)).not.toContain('outbox')
    await smtp.close()
  })

  it('an erasure deletes the outbox files of one recipient only, by their names; the sweep deletes files past the retention', async () => {
    const dataDir = tempDir()
    const { logger } = quiet()
    const mailer = createMailer({ mail: { from: 'a@b.example', outboxRetentionDays: 7 }, dataDir }, logger)
    const mine = [await mailer.send({ to: 'Gone@Example.com', subject: 'one', text: 't' }), await mailer.send({ to: 'gone@example.com', subject: 'two', text: 't' })]
    const theirs = await mailer.send({ to: 'stays@example.com', subject: 'three', text: 't' })
    // Another mailer on the same data directory (a restart) shares the key, so it finds the files too.
    const restarted = createMailer({ mail: { from: 'a@b.example' }, dataDir }, logger)
    expect(await restarted.forgetRecipient(' GONE@example.com ')).toBe(2)
    for (const sent of mine) expect(existsSync(sent.outboxFile!)).toBe(false)
    expect(existsSync(theirs.outboxFile!)).toBe(true)
    expect(await restarted.forgetRecipient('gone@example.com')).toBe(0)
    expect(await restarted.forgetRecipient('not an address')).toBe(0)

    // Eight days old: swept; the fresh one stays.
    const old = await mailer.send({ to: 'old@example.com', subject: 'old', text: 't' })
    const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000)
    utimesSync(old.outboxFile!, eightDaysAgo, eightDaysAgo)
    expect(await mailer.sweepOutbox()).toBe(1)
    expect(existsSync(old.outboxFile!)).toBe(false)
    expect(existsSync(theirs.outboxFile!)).toBe(true)
    expect(await mailer.sweepOutbox(Date.now() + 7 * 86_400_000 + 60_000)).toBe(1)
    expect(readdirSync(join(dataDir, 'outbox'))).toEqual([])
  })

  it('files an older dcgate wrote untagged are tagged by the sweep, then erasable', async () => {
    const dataDir = tempDir()
    const { logger } = quiet()
    const mailer = createMailer({ mail: { from: 'a@b.example' }, dataDir }, logger)
    mkdirSync(join(dataDir, 'outbox'), { recursive: true })
    const legacy = join(dataDir, 'outbox', '2026-11-01T10-00-00-000Z-0a1b2c3d.eml')
    writeFileSync(legacy, 'From: a@b.example\nTo: Legacy@example.com\nSubject: old style\n\nbody\n', { mode: 0o600 })
    expect(await mailer.forgetRecipient('legacy@example.com')).toBe(0)
    expect(await mailer.sweepOutbox()).toBe(0)
    expect(readdirSync(join(dataDir, 'outbox'))).toEqual([expect.stringMatching(/^[0-9a-f]{32}-2026-11-01T10-00-00-000Z-0a1b2c3d\.eml$/)])
    expect(await mailer.forgetRecipient('legacy@example.com')).toBe(1)
    expect(readdirSync(join(dataDir, 'outbox'))).toEqual([])
  })
})

describe('maskEmail', () => {
  it('keeps the first letters and the top-level domain only', () => {
    expect(maskEmail('ann.lee@example.co.uk')).toBe('a***@e***.co.uk')
    expect(maskEmail('x@localhost')).toBe('x***@l***')
    expect(maskEmail('ünïcode@bücher.de')).toBe('ü***@b***.de')
    expect(maskEmail('broken')).toBe('***')
  })
})

describe('the embedded default, no SMTP configured', () => {
  it('a public request writes the confirmation to the outbox; its button completes the erasure, which deletes that mail', async () => {
    const app = await bootDsarApp(undefined)
    apps.push(app)
    expect((await publicRequest(app, { email: 'outbox.person@example.com', cop_key: copKey(app, 'shop') })).status).toBe(200)
    expect((await publicRequest(app, { email: 'bystander@example.com', cop_key: copKey(app, 'shop') })).status).toBe(200)
    const link = /http:\/\/localhost:3000\/public\/dsar\/confirm\?token=[A-Za-z0-9_%-]+/
    const mailTo = async (address: string) => (await outboxMails(app.dataDir)).filter((mail) => mail.to.includes(address))
    // Written in the background: wait for the whole messages.
    await expect.poll(async () => (await outboxMails(app.dataDir)).filter((mail) => link.test(mail.decoded)).length).toBe(2)
    const confirm = link.exec((await mailTo('outbox.person@example.com'))[0]!.decoded)![0]
    const click = await confirmByButton(app, confirm)
    expect(click.status).toBe(303)
    const proof = await (await app.request(new URL(click.headers.get('location')!).pathname.replace('/status/', '/proof/'))).json()
    expect(proof).toMatchObject({ status: 'completed', maskedEmail: 'o***@e***.com' })
    expect(proof.merchant_log).toContainEqual(expect.objectContaining({ event: 'erased', detail: 'outbox_mails', records: 1 }))
    // The confirmation (with its link) is gone; the completion mail is written after the erasure; the bystander's stays.
    await expect.poll(async () => (await mailTo('outbox.person@example.com')).map((mail) => mail.subject)).toEqual(['Your data at Shop has been deleted'])
    expect(await mailTo('bystander@example.com')).toHaveLength(1)
  })
})
