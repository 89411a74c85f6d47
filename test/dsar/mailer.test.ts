import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createConsola } from 'consola'
import { createMailer } from '../../core/mail/mailer.ts'
import { maskEmail } from '../../core/mail/mask.ts'
import { tempDir } from '../helpers/server-process.ts'
import type { TestApp } from '../helpers/app.ts'
import { startSmtp } from './smtp.ts'
import { bootDsarApp, copKey, pathOf, publicRequest } from './support.ts'

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

  it('without mail.smtp, writes an .eml file to <dataDir>/outbox (owner-only) and logs it without the address', async () => {
    const dataDir = tempDir()
    const { logger, lines } = quiet()
    const mailer = createMailer({ mail: { from: 'dcgate <no-reply@localhost>' }, dataDir }, logger)
    const sent = await mailer.send({ to: 'Reader@Example.com', subject: 'Outbox test', text: 'Open https://example.com/link' })
    const files = readdirSync(join(dataDir, 'outbox'))
    expect(files).toHaveLength(1)
    expect(sent.outboxFile).toBe(join(dataDir, 'outbox', files[0]!))
    expect(statSync(sent.outboxFile!).mode & 0o777).toBe(0o600)
    const eml = readFileSync(sent.outboxFile!, 'utf8')
    expect(eml).toMatch(/^To: Reader@example\.com$/m)
    expect(eml).toMatch(/^Subject: Outbox test$/m)
    expect(eml).toContain('https://example.com/link')
    expect(lines.join('\n')).toContain(`mail "Outbox test" to R***@E***.com written to ${sent.outboxFile}`)
    expect(lines.join('\n')).not.toContain('Reader@')
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
  it('a public request writes the confirmation to the outbox; its link completes the erasure', async () => {
    const app = await bootDsarApp(undefined)
    apps.push(app)
    expect((await publicRequest(app, { email: 'outbox.person@example.com', cop_key: copKey(app, 'shop') })).status).toBe(200)
    const outbox = join(app.dataDir, 'outbox')
    const link = /http:\/\/localhost:3000\/public\/dsar\/confirm\?token=[A-Za-z0-9_%-]+/
    const read = () => { try { return readdirSync(outbox).map((file) => readFileSync(join(outbox, file), 'utf8').replace(/=\r?\n/g, '').replace(/=3D/g, '=')) } catch { return [] } }
    // Written in the background: wait for the whole message.
    await expect.poll(() => read().some((eml) => link.test(eml))).toBe(true)
    const confirm = link.exec(read().find((eml) => link.test(eml))!)![0]
    const click = await app.request(pathOf(confirm))
    expect(click.status).toBe(303)
    const proof = await (await app.request(new URL(click.headers.get('location')!).pathname.replace('/status/', '/proof/'))).json()
    expect(proof).toMatchObject({ status: 'completed', maskedEmail: 'o***@e***.com' })
    await expect.poll(() => readdirSync(outbox).length).toBe(2)
  })
})
