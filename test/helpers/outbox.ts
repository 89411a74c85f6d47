import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { simpleParser } from 'mailparser'

const LINK = /https?:\/\/\S+\/dashboard\/link\?token=[\w-]+/

/** A message as written, and what a mail client shows of it: its recipients and subject, its text and HTML decoded. */
export interface ReadMail { raw: string, to: string[], subject: string, decoded: string }

/**
 * Reads a message with mailparser, which undoes each part's own transfer encoding: a test that decoded
 * quoted-printable over the whole file cut "3D" from the tokens that start with it in the outbox's 8bit text part.
 */
export async function readMail(raw: string): Promise<ReadMail> {
  const mail = await simpleParser(raw)
  const to = [mail.to ?? []].flat().flatMap((group) => group.value.map((address) => address.address?.toLowerCase() ?? ''))
  return { raw, to, subject: mail.subject ?? '', decoded: [mail.text, mail.html || ''].join('\n') }
}

/**
 * The finished messages in `<dataDir>/outbox` (no SMTP configured), oldest file name first. The outbox writes
 * `<name>.eml.part`, then renames it, so only .eml files count; a file that vanishes after the listing is skipped.
 */
export async function outboxMails(dataDir: string): Promise<ReadMail[]> {
  const dir = join(dataDir, 'outbox')
  const files = (await readdir(dir).catch(() => [])).filter((file) => file.endsWith('.eml')).sort()
  const raws = await Promise.all(files.map((file) => readFile(join(dir, file), 'utf8').catch(() => undefined)))
  return Promise.all(raws.filter((raw) => raw !== undefined).map(readMail))
}

/** The sign-in links in the outbox, one per mail (the HTML alternative repeats it), only to `to` when given. */
export async function mailedLinks(dataDir: string, to?: string): Promise<string[]> {
  return (await outboxMails(dataDir))
    .filter((mail) => !to || mail.to.includes(to.toLowerCase()))
    .flatMap((mail) => LINK.exec(mail.decoded)?.[0] ?? [])
}
