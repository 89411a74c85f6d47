import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const LINK = /https?:\/\/\S+\/dashboard\/link\?token=[\w-]+/

/** A message in the outbox: as written, and its parts' text decoded (mailParts). */
export interface OutboxMail { raw: string, decoded: string }

/**
 * The finished messages in `<dataDir>/outbox` (no SMTP configured), oldest file name first. The outbox writes
 * `<name>.eml.part`, then renames it, so only .eml files count; a file that vanishes after the listing is skipped.
 */
export function outboxMails(dataDir: string): OutboxMail[] {
  const dir = join(dataDir, 'outbox')
  let files: string[] = []
  try {
    files = readdirSync(dir).filter((file) => file.endsWith('.eml')).sort()
  }
  catch {
    return []
  }
  return files.map((file) => readMail(join(dir, file))).filter((raw) => raw !== '')
    .map((raw) => ({ raw, decoded: mailParts(raw).join('\n') }))
}

/** The sign-in links in the outbox, one per mail (the HTML alternative repeats it), only to `to` when given. */
export function mailedLinks(dataDir: string, to?: string): string[] {
  return outboxMails(dataDir)
    .filter((mail) => !to || mail.raw.toLowerCase().includes(`to: ${to.toLowerCase()}`))
    .flatMap((mail) => LINK.exec(mail.decoded)?.[0] ?? [])
}

/**
 * The text of a message's leaf parts (the message itself when it has none), multiparts opened in turn, each decoded
 * only when it says it is quoted-printable: the outbox writes its text part in 8bit, where `token=3D…` is a token
 * starting with "3D", not an escaped `=`.
 */
export function mailParts(mail: string): string[] {
  const split = /\r?\n\r?\n/.exec(mail)
  const headers = split ? mail.slice(0, split.index) : ''
  const body = split ? mail.slice(split.index + split[0].length) : mail
  const boundary = /^content-type:\s*multipart\/[^\r\n]*(?:\r?\n[ \t][^\r\n]*)*?boundary="?([^";\r\n]+)"?/im.exec(headers)?.[1]
  if (boundary) return body.split(`--${boundary}`).slice(1, -1).flatMap((part) => mailParts(part.replace(/^\r?\n/, '')))
  if (!/^content-transfer-encoding:\s*quoted-printable/im.test(headers)) return [body]
  // Escapes are bytes of UTF-8 text: gathered as latin1 characters, then read as UTF-8.
  const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
  return [Buffer.from(bytes, 'latin1').toString('utf8')]
}

function readMail(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  }
  catch {
    return ''
  }
}
