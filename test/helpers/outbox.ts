import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const LINK = /https?:\/\/\S+\/dashboard\/link\?token=[\w-]+/

/**
 * The sign-in links in `<dataDir>/outbox` (no SMTP configured), one per mail, oldest file name first; only to `to`
 * when given. Only finished messages count (the outbox writes `<name>.eml.part`, then renames it), and a file that
 * vanishes between the listing and the read is skipped.
 */
export function mailedLinks(dataDir: string, to?: string): string[] {
  const dir = join(dataDir, 'outbox')
  let files: string[] = []
  try {
    files = readdirSync(dir).filter((file) => file.endsWith('.eml')).sort()
  }
  catch {
    return []
  }
  const links: string[] = []
  for (const file of files) {
    const mail = readMail(join(dir, file))
    if (!mail || (to && !mail.toLowerCase().includes(`to: ${to.toLowerCase()}`))) continue
    // The text part comes first; the HTML alternative repeats the same link.
    const link = mailParts(mail).map((part) => LINK.exec(part)?.[0]).find(Boolean)
    if (link) links.push(link)
  }
  return links
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
