import { appendFileSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import type { ConsolaInstance } from 'consola'

/** Dead-letter files are deleted this long after their day: they hold rows as received, personal data included. */
const KEEP_DAYS = 30
const DAY_MS = 86_400_000

/** One row (or journal line) the database would not take, and why. */
export interface Rejected {
  /** `page_events`, `visits`, `withdrawals`, or `journal` for a line that could not be read back. */
  table: string
  /** The PostgreSQL error code (SQLSTATE), or `unreadable` for a journal line that is not a record. */
  code: string
  /** The database's message (it may quote the value, so it stays in the file, never in a log). */
  reason: string
  /** The row's values in column order (columns.ts), or the journal line as it was. */
  row: unknown
}

export interface DeadLetter {
  put: (entry: Rejected) => void
  /** Files these, and logs how many of which table and error: never their values (personal data). */
  putAll: (entries: readonly Rejected[]) => void
  /** Moves a whole journal segment that could not be read into the dead-letter directory. */
  putSegment: (segment: string, reason: string) => void
  /** Rows and lines set aside since start. */
  readonly count: number
  readonly dir: string
}

/**
 * Where the capture writer sets aside what the database refuses (text PostgreSQL cannot store, a value too long for
 * its column, a journal line that is not a record), so that one bad row never holds back the others. One file a day,
 * `<dir>/<YYYY-MM-DD>.ndjson`, readable by dcgate's user only, deleted after KEEP_DAYS.
 */
export function openDeadLetter(dir: string, logger: ConsolaInstance): DeadLetter {
  let count = 0
  let day = ''
  const ready = () => {
    const today = new Date().toISOString().slice(0, 10)
    if (today === day) return today
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    day = today
    expire(dir)
    return today
  }
  const put = (entry: Rejected) => {
    appendFileSync(join(dir, `${ready()}.ndjson`), `${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`, { mode: 0o600 })
    count++
  }
  return {
    put,
    putAll(entries) {
      if (entries.length === 0) return
      const kinds = new Map<string, number>()
      let lost = 0
      for (const entry of entries) {
        const kind = `${entry.table} ${entry.code}`
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
        try {
          put(entry)
        }
        catch {
          lost++ // the disk is full or the directory gone: the log line below still counts them
        }
      }
      const list = [...kinds].map(([kind, n]) => `${n} × ${kind}`).join(', ')
      const where = lost ? `${entries.length - lost} set aside in ${dir}, ${lost} could not be filed there either` : `set aside in ${dir}`
      logger.warn(`capture: ${entries.length} row(s) could not be stored (${list}), ${where}; the others were written`)
    },
    putSegment(segment, reason) {
      ready()
      renameSync(segment, join(dir, `${basename(segment, '.ndjson')}.segment`))
      appendFileSync(join(dir, `${day}.ndjson`), `${JSON.stringify({ at: new Date().toISOString(), table: 'journal', code: 'unreadable', reason, row: basename(segment) })}\n`, { mode: 0o600 })
      count++
    },
    get count() {
      return count
    },
    dir,
  }
}

/**
 * An erasure: drops the dead-letter lines of `siteId` that hold any of `texts` (the address as typed or URL-encoded,
 * its hashes; compared in lower case), rewriting each file that had one. Lines of the person's visits that hold
 * none of them stay until their file expires. Returns how many lines were dropped.
 */
export function forgetInDeadLetter(dir: string, siteId: string, texts: readonly string[]): number {
  let names: string[]
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.ndjson'))
  }
  catch {
    return 0 // nothing was ever set aside
  }
  const site = JSON.stringify(siteId)
  const needles = texts.map((text) => text.toLowerCase())
  let dropped = 0
  for (const name of names) {
    const file = join(dir, name)
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean)
    const kept = lines.filter((line) => {
      const lower = line.toLowerCase()
      return !(line.includes(site) && needles.some((needle) => lower.includes(needle)))
    })
    if (kept.length === lines.length) continue
    dropped += lines.length - kept.length
    const temporary = `${file}.erasing`
    writeFileSync(temporary, kept.map((line) => `${line}\n`).join(''), { mode: 0o600 })
    renameSync(temporary, file)
  }
  return dropped
}

function expire(dir: string): void {
  const cutoff = Date.now() - KEEP_DAYS * DAY_MS
  for (const name of readdirSync(dir)) {
    const file = join(dir, name)
    try {
      if (statSync(file).mtimeMs < cutoff) rmSync(file, { force: true })
    }
    catch {
      // gone meanwhile, or not ours to delete: the next day's round tries again
    }
  }
}
