import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync, writevSync } from 'node:fs'
import { join } from 'node:path'

/**
 * An append-only journal of accepted hits, so a hit acknowledged to the browser survives a process crash before
 * its batch reaches the database. Each line is one write(2) to the current segment: in the kernel's page cache
 * when the answer leaves, so only a power loss (or an OS crash) before the kernel writes it out loses it.
 * Segments are named `<pid>-<started>-<n>.ndjson`; a segment is deleted once its rows are committed.
 */
export interface Journal {
  /** Writes one line, given as its parts (it ends with a newline), with one write(2); throws when it cannot. */
  write: (parts: readonly Uint8Array[]) => void
  /** Closes the current segment (returned, if it holds anything) and starts a new one. */
  rotate: () => string | undefined
  /** Segments left by processes that are gone: their records were acknowledged but may not be stored. */
  orphans: () => string[]
  /** A segment's lines, as written (the last may be cut short by a crash); throws when the file cannot be read. */
  read: (segment: string) => string[]
  /** Counts an earlier process's segment in `bytes` until it is removed (its rows wait in memory for a retry). */
  keep: (segment: string) => void
  remove: (segment: string) => void
  /** Bytes in the segments not removed yet: what the cap on the journal counts. */
  readonly bytes: number
  close: () => void
}

export function openJournal(dir: string): Journal {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const prefix = `${process.pid}-${Date.now()}`
  let n = 0
  let current = ''
  let fd = -1
  let written = false
  /** Bytes of the current segment, and of each closed one not removed yet. */
  let currentBytes = 0
  const closed = new Map<string, number>()
  let closedBytes = 0
  const open = () => {
    current = join(dir, `${prefix}-${++n}.ndjson`)
    fd = openSync(current, 'a', 0o600)
    written = false
    currentBytes = 0
  }
  open()
  return {
    write(parts) {
      let size = 0
      for (const part of parts) size += part.byteLength
      let done = writevSync(fd, parts as Uint8Array[])
      // A regular file takes the whole write; should the kernel still stop short, the rest follows.
      if (done < size) {
        const line = Buffer.concat(parts as Uint8Array[])
        while (done < size) done += writeSync(fd, line, done)
      }
      written = true
      currentBytes += size
    },
    rotate() {
      const done = current
      const hadRecords = written
      const size = currentBytes
      closeSync(fd)
      open()
      if (hadRecords) {
        closed.set(done, size)
        closedBytes += size
        return done
      }
      rmSync(done, { force: true })
      return undefined
    },
    orphans: () => readdirSync(dir)
      .filter((name) => name.endsWith('.ndjson') && !name.startsWith(`${prefix}-`) && !isAlive(Number(name.split('-')[0])))
      .sort()
      .map((name) => join(dir, name)),
    read: (segment) => readFileSync(segment, 'utf8').split('\n').filter((line) => line.trim()),
    keep(segment) {
      if (closed.has(segment)) return
      const size = statSync(segment).size
      closed.set(segment, size)
      closedBytes += size
    },
    remove(segment) {
      rmSync(segment, { force: true })
      closedBytes -= closed.get(segment) ?? 0
      closed.delete(segment)
    },
    get bytes() {
      return closedBytes + currentBytes
    },
    close() {
      closeSync(fd)
      if (!written) rmSync(current, { force: true })
    },
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  if (pid === process.pid) return false // an earlier process had our id (ids are reused after a restart)
  try {
    process.kill(pid, 0)
    return true
  }
  catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
