import { randomBytes } from 'node:crypto'
import { createConsola } from 'consola'
import { describe, expect, it } from 'vitest'
import { createMailer } from '../../core/mail/mailer.ts'
import { mailedLinks } from '../helpers/outbox.ts'
import { tempDir } from '../helpers/server-process.ts'
import { startSmtp } from './smtp.ts'

// The tests' mail readers (test/helpers/outbox.ts, ./smtp.ts) read a message with mailparser, which undoes each
// part's own transfer encoding. Reading `=3D` as `=` over the whole file cut "3D" from the 1 in 4,096 sign-in tokens that start with it, in the outbox's
// 8bit text part: a test then followed a link that was never sent.
const quiet = createConsola({ level: -999 })
const linkMail = (token: string, extra = '') => ({
  to: 'member@shop.example',
  subject: 'Your dcgate sign-in link',
  text: `Open this link to sign in:\n\nhttp://localhost:3000/dashboard/link?token=${token}\n\nCafé ${extra}\n`,
})

describe('reading the mails dcgate wrote', () => {
  it('finds each outbox link whole, one per mail, in the 8bit text part and in a quoted-printable one', async () => {
    const dataDir = tempDir()
    const mailer = createMailer({ mail: { from: 'dcgate <no-reply@shop.example>' }, dataDir }, quiet)
    const tokens = [`3D${randomBytes(30).toString('base64url')}`, randomBytes(32).toString('base64url'), `3D3D${randomBytes(29).toString('base64url')}`]
    for (const token of tokens) await mailer.send(linkMail(token))
    // A line over 998 characters keeps nodemailer's quoted-printable text part.
    await mailer.send(linkMail(tokens[0]!, 'x'.repeat(1200)))
    const links = (await mailedLinks(dataDir, 'member@shop.example')).map((link) => new URL(link).searchParams.get('token'))
    expect(links.toSorted()).toEqual([...tokens, tokens[0]].toSorted())
    expect(await mailedLinks(dataDir, 'someone-else@shop.example')).toEqual([])
    mailer.close()
  })

  it('decodes an SMTP message\'s quoted-printable parts as UTF-8, an escaped "=" once', async () => {
    const smtp = await startSmtp()
    const mailer = createMailer({ mail: { smtp: smtp.url, from: 'dcgate <no-reply@shop.example>' }, dataDir: tempDir() }, quiet)
    const token = `3D${randomBytes(30).toString('base64url')}`
    await mailer.send(linkMail(token))
    const [mail] = await smtp.waitFor('member@shop.example')
    expect(mail!.decoded).toMatch(new RegExp(`token=${token}\\s`))
    expect(mail!.decoded).toContain('Café')
    mailer.close()
    await smtp.close()
  })
})
