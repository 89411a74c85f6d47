import { createHmac, randomBytes } from 'node:crypto'
import { link, mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { canonicalEmail, emailKeyForm } from '../identity/email.ts'

export const DEFAULT_OUTBOX_RETENTION_DAYS = 7
const DAY_MS = 86_400_000
/** Enough of a message to read its To header when indexing a file written before names were tagged. */
const HEADER_BYTES = 16_384

/**
 * `<dataDir>/outbox/`: the mails written as .eml files when no SMTP server is configured. They hold the raw address
 * and its links, so they are erasable and they expire:
 * - each file name starts with a tag of its recipient, a keyed hash (HMAC-SHA256 with `<dataDir>/outbox.key`, made
 *   once, owner-only) of the canonical address, so an erasure lists the folder and deletes that person's files
 *   without opening any, and a name tells nothing about the person to whoever lists the folder;
 * - `sweep` deletes files older than the retention (mail.outboxRetentionDays) and tags the files an older dcgate
 *   wrote untagged, reading their To header once.
 */
export function createOutbox(dataDir: string, retentionDays = DEFAULT_OUTBOX_RETENTION_DAYS) {
  const dir = resolve(dataDir, 'outbox')
  const keyFile = resolve(dataDir, 'outbox.key')
  let key: Promise<Buffer> | undefined

  // A failed read is not kept: the next call tries again.
  const secret = () => (key ??= loadKey(keyFile).catch((error: unknown) => { key = undefined; throw error }))
  const tagOf = async (address: string) => createHmac('sha256', await secret()).update(emailKeyForm(address)).digest('hex').slice(0, 32)

  return {
    dir,

    /** Writes one message for `to` (a canonical address); returns the file. */
    async write(to: string, message: Buffer): Promise<string> {
      await mkdir(dir, { recursive: true, mode: 0o700 })
      const file = join(dir, `${await tagOf(to)}-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`)
      // Written aside, then renamed: whoever watches the outbox never reads half a message.
      await writeFile(`${file}.part`, message, { mode: 0o600 })
      await rename(`${file}.part`, file)
      return file
    },

    /** Deletes every file addressed to `address`; returns how many. */
    async forget(address: string): Promise<number> {
      const canonical = canonicalEmail(address)
      const names = await list(dir)
      if (!canonical || !names.length) return 0
      const prefix = `${await tagOf(canonical)}-`
      let deleted = 0
      for (const name of names.filter((entry) => entry.startsWith(prefix))) deleted += await remove(join(dir, name))
      return deleted
    },

    /** Deletes the files older than the retention and tags untagged ones; returns how many were deleted. */
    async sweep(now = Date.now()): Promise<number> {
      let deleted = 0
      for (const name of await list(dir)) {
        const file = join(dir, name)
        const stats = await stat(file).catch(() => undefined)
        if (!stats?.isFile()) continue
        if (stats.mtimeMs < now - retentionDays * DAY_MS) deleted += await remove(file)
        else if (name.endsWith('.eml') && !TAGGED.test(name)) await tagLegacy(file, name)
      }
      return deleted
    },
  }

  async function tagLegacy(file: string, name: string): Promise<void> {
    const head = (await readFile(file).catch(() => Buffer.alloc(0))).subarray(0, HEADER_BYTES).toString('utf8')
    const to = canonicalEmail(/^To: *([^\r\n]*)$/im.exec(head)?.[1])
    // A header that is not one plain address stays untagged, and goes at the end of the retention.
    if (to) await rename(file, join(dir, `${await tagOf(to)}-${name}`)).catch(() => undefined)
  }
}

export type Outbox = ReturnType<typeof createOutbox>

const TAGGED = /^[0-9a-f]{32}-/

async function list(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((name) => name.endsWith('.eml') || name.endsWith('.eml.part'))
  }
  catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/** 1 when the file was deleted, 0 when it was already gone (another instance or sweep got there first). */
async function remove(file: string): Promise<number> {
  try {
    await unlink(file)
    return 1
  }
  catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw error
  }
}

/** The outbox key: read, or made once; a link makes creation atomic, so two mailers starting together agree. */
async function loadKey(keyFile: string): Promise<Buffer> {
  const read = () => readFile(keyFile).then((bytes) => (bytes.length >= 32 ? bytes : Promise.reject(new Error(`${keyFile} is too short`))))
  try {
    return await read()
  }
  catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  await mkdir(resolve(keyFile, '..'), { recursive: true })
  const draft = `${keyFile}.${randomBytes(6).toString('hex')}.tmp`
  await writeFile(draft, randomBytes(32), { mode: 0o600 })
  try {
    await link(draft, keyFile)
  }
  catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  finally {
    await unlink(draft).catch(() => undefined)
  }
  return read()
}
