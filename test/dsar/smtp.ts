/**
 * A real SMTP server in the test process (CONVENTIONS.md rule 4: our own mail is never mocked). dcgate sends to it
 * through nodemailer as it would to any mail server; tests read what was delivered and follow its links.
 */
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { readMail } from '../helpers/outbox.ts'

export interface ReceivedMail {
  from: string
  to: string[]
  raw: string
  subject: string
  /** The message with quoted-printable undone, for reading. */
  decoded: string
  /** Every http(s) link in the message, in order, without duplicates. */
  links: string[]
}

export interface TestSmtp {
  url: string
  messages: ReceivedMail[]
  /** Mails delivered to `address` (case-insensitive). */
  to: (address: string) => ReceivedMail[]
  /** Waits until `count` mails reached `address`; returns them. */
  waitFor: (address: string, count?: number, timeoutMs?: number) => Promise<ReceivedMail[]>
  /** While true, the server refuses every message (a mail server that is down for us). */
  refuse: boolean
  close: () => Promise<void>
}

export async function startSmtp(): Promise<TestSmtp> {
  const messages: ReceivedMail[] = []
  const state = { refuse: false }
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      callback(state.refuse ? Object.assign(new Error('Mailbox unavailable (test)'), { responseCode: 450 }) : undefined)
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        void readMail(Buffer.concat(chunks).toString('utf8')).then(({ raw, subject, decoded }) => {
          messages.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            raw,
            subject,
            decoded,
            links: [...new Set(decoded.match(/https?:\/\/[^\s"<>]+/g) ?? [])],
          })
          callback()
        }, callback)
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.server.address() as AddressInfo
  const to = (address: string) => messages.filter((m) => m.to.includes(address.toLowerCase()))
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to,
    get refuse() { return state.refuse },
    set refuse(value: boolean) { state.refuse = value },
    async waitFor(address, count = 1, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (to(address).length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} mail(s) to ${address} within ${timeoutMs} ms, got ${to(address).length}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return to(address)
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
