import { randomBytes } from 'node:crypto'
import { mkdir, rename, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { ConsolaInstance } from 'consola'
import { createTransport } from 'nodemailer'
import type { ResolvedConfig } from '../config/schema.ts'
import { maskEmail } from './mask.ts'

export interface MailMessage {
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
  close: () => void
}

/**
 * dcgate's own mail (deletion confirmations and the like). With `mail.smtp` set, messages go to that SMTP server
 * (nodemailer). Without it, each message is written as an .eml file to `<dataDir>/outbox/` (readable by dcgate's
 * user only) and the file is logged, so the embedded default works end to end: open the file to follow its links.
 */
export function createMailer(config: Pick<ResolvedConfig, 'mail' | 'dataDir'>, logger: ConsolaInstance): Mailer {
  const from = config.mail.from
  if (config.mail.smtp) {
    const transport = createTransport({
      url: config.mail.smtp,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    })
    return {
      description: describeSmtp(config.mail.smtp),
      async send(message) {
        const info = await transport.sendMail({ from, ...message })
        logger.debug(`mail "${message.subject}" to ${maskEmail(message.to)} sent (${info.response})`)
        return { messageId: info.messageId }
      },
      close: () => transport.close(),
    }
  }

  const dir = resolve(config.dataDir, 'outbox')
  const composer = createTransport({ streamTransport: true, buffer: true, newline: 'unix' })
  return {
    description: `outbox ${dir}`,
    async send(message) {
      const info = await composer.sendMail({ from, ...message })
      await mkdir(dir, { recursive: true, mode: 0o700 })
      const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`)
      // Written aside, then renamed: whoever watches the outbox never reads half a message.
      await writeFile(`${file}.part`, info.message as Buffer, { mode: 0o600 })
      await rename(`${file}.part`, file)
      logger.info(`mail "${message.subject}" to ${maskEmail(message.to)} written to ${file} (no mail.smtp configured)`)
      return { messageId: info.messageId, outboxFile: file }
    },
    close: () => composer.close(),
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
