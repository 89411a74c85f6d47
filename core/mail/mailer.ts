import type { ConsolaInstance } from 'consola'
import type * as Nodemailer from 'nodemailer'
import { escapeHtml } from '../http/escape-html.ts'
import { canonicalEmail, emailKeyForm } from '../identity/email.ts'
import { maskEmail } from './mask.ts'
import { createOutbox, DEFAULT_OUTBOX_RETENTION_DAYS } from './outbox.ts'

export interface MailMessage {
  /** One mailbox. It is sent to in canonical form, with no display name; anything else is refused. */
  to: string
  subject: string
  text: string
  html?: string
}

export interface SentMail {
  messageId: string
  /** The .eml file written when no SMTP server is configured. */
  outboxFile?: string
}

export interface Mailer {
  /** Sends one message; rejects when the SMTP server refused it or could not be reached. */
  send: (message: MailMessage) => Promise<SentMail>
  /** `smtp://host:port` (never the password) or `outbox <dir>`, for logs. */
  description: string
  /** Deletes the outbox files addressed to this address (an erasure); returns how many. */
  forgetRecipient: (address: string) => Promise<number>
  /** Deletes outbox files older than mail.outboxRetentionDays; returns how many. */
  sweepOutbox: (now?: number) => Promise<number>
  close: () => void
}

/** The recipient is not exactly one mailbox: nothing was sent. */
export class MailAddressError extends Error {
  override name = 'MailAddressError'
  constructor() {
    super('The recipient is not one email address; nothing was sent')
  }
}

export interface MailConfig {
  dataDir: string
  mail: { smtp?: string, from: string, outboxRetentionDays?: number }
}

/**
 * dcgate's own mail (deletion confirmations and the like). With `mail.smtp` set, messages go to that SMTP server
 * (nodemailer). Without it, each message is written as an .eml file to `<dataDir>/outbox/` (readable by dcgate's
 * user only, erasable per recipient, expiring: ./outbox.ts) and the file is logged, so the embedded default works
 * end to end: open the file to follow its links. The outbox is swept and erased in both modes, since files written
 * before an SMTP server was configured stay there.
 *
 * Every message goes to the canonical form of its one recipient (its domain in punycode), given to nodemailer as an
 * address object, so no text a requester typed is ever read as a display name or a second recipient.
 */
export function createMailer(config: MailConfig, logger: ConsolaInstance): Mailer {
  const from = config.mail.from
  const outbox = createOutbox(config.dataDir, config.mail.outboxRetentionDays ?? DEFAULT_OUTBOX_RETENTION_DAYS)
  const outboxDuties = {
    forgetRecipient: (address: string) => outbox.forget(address),
    sweepOutbox: (now?: number) => outbox.sweep(now),
  }
  const recipient = (message: MailMessage) => {
    const to = canonicalEmail(message.to)
    if (!to) throw new MailAddressError()
    // The domain goes in punycode: every mail server takes it, with or without SMTPUTF8.
    return { to, fields: { ...message, to: { name: '', address: emailKeyForm(to) } } }
  }

  if (config.mail.smtp) {
    const smtp = config.mail.smtp
    const transport = lazyTransport((nodemailer) => nodemailer.createTransport({
      url: smtp,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    }))
    return {
      description: describeSmtp(config.mail.smtp),
      async send(message) {
        const { to, fields } = recipient(message)
        const info = await (await transport.get()).sendMail({ from, ...fields })
        logger.debug(`mail "${message.subject}" to ${maskEmail(to)} sent (${info.response})`)
        return { messageId: info.messageId }
      },
      ...outboxDuties,
      close: () => transport.close(),
    }
  }

  const composer = lazyTransport((nodemailer) => nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' }))
  return {
    description: `outbox ${outbox.dir}`,
    async send(message) {
      const { to, fields } = recipient(message)
      const info = await (await composer.get()).sendMail({ from, ...fields, ...readableParts(fields) })
      const file = await outbox.write(to, info.message as Buffer)
      logger.info(`mail "${message.subject}" to ${maskEmail(to)} written to ${file} (no mail.smtp configured)`)
      return { messageId: info.messageId, outboxFile: file }
    },
    ...outboxDuties,
    close: () => composer.close(),
  }
}

/**
 * A nodemailer transport made with the first message: nodemailer (650 kB of source) is loaded then, so a server that
 * sends no mail, as most do most of the time, holds none of it (issue 26).
 */
function lazyTransport<T extends { close: () => void }>(make: (nodemailer: typeof Nodemailer) => T): { get: () => Promise<T>, close: () => void } {
  let made: Promise<T> | undefined
  return {
    get: () => (made ??= import('nodemailer').then(make)),
    close: () => void made?.then((transport) => transport.close(), () => {}),
  }
}

/** Longest line RFC 5322 allows (998 characters before CRLF). */
const MAX_LINE = 998

/**
 * The outbox's text part in 8bit rather than quoted-printable, so a link read with `cat` or `less` is whole and can be
 * followed (quoted-printable breaks lines longer than 76 characters with `=` and writes `=` as `=3D`). The file is
 * never sent: an 8bit part needs no SMTP extension here. The part can only be given whole inside a multipart message,
 * so a text-only mail gets its text as a preformatted HTML alternative too. A line too long for 8bit keeps the default.
 */
function readableParts(message: Pick<MailMessage, 'text' | 'html'>): Pick<MailMessage, 'html'> & { text: string | { raw: string } } {
  const { text } = message
  if (text.split('\n').some((line) => Buffer.byteLength(line) > MAX_LINE)) return { text, html: message.html }
  return {
    text: { raw: `Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n${text.replace(/\r\n/g, '\n')}` },
    html: message.html ?? `<!doctype html><meta charset="utf-8"><pre>${escapeHtml(text)}</pre>`,
  }
}

function describeSmtp(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}`
  }
  catch {
    return 'smtp'
  }
}
