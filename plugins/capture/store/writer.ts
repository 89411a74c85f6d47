import type { ConsolaInstance } from 'consola'
import type { RunPrepared } from '../../../core/db/prepared.ts'
import { openDeadLetter, type Rejected } from './dead-letter.ts'
import { writeIsolating } from './isolate.ts'
import { openJournal } from './journal.ts'
import { batchesOfLine, PendingRows } from './pending.ts'
import type { CaptureBatch } from './rows.ts'
import { metrics } from '../../../core/metrics/registry.ts'

export interface CaptureWriter {
  /** Journals the batch and queues it for the next flush; resolves once journaled (answer only then). */
  add: (batch: CaptureBatch) => Promise<void>
  /** Writes everything queued so far; resolves once it is committed. Flushes never overlap. */
  flush: () => Promise<void>
  start: () => Promise<void>
  /** Stops the timer and flushes what is left (shutdown). */
  stop: () => Promise<void>
  /**
   * True while the rows waiting for the database (in memory, or in their journal) are past `maxPendingBytes`: new
   * hits are refused until the database has caught up, rather than growing memory and the journal without bound.
   */
  readonly full: boolean
  /** Rows (and journal lines) the database refused, set aside in the dead-letter directory since start. */
  readonly deadLettered: number
  /** Hits accepted and not written yet (in memory; journaled or about to be). */
  readonly queuedHits: number
  /** Bytes in journal segments not removed yet (their rows are not written). */
  readonly journalBytes: number
}

export interface CaptureWriterOptions {
  prepared: RunPrepared
  journalDir: string
  /** Where the rows the database refuses go (dead-letter.ts). */
  deadLetterDir: string
  flushSize: number
  flushIntervalMs: number
  /** The cap on waiting rows, in memory and in the journal each; unset: no cap. */
  maxPendingBytes?: number
  logger: ConsolaInstance
  onError: (error: unknown) => void
}

/** Rows taken for a flush, and the journal segment that holds them until they are committed. */
interface Unwritten { rows: PendingRows, segment: string | undefined, bytes: number }

/**
 * The hot path's only write: hits are buffered in memory (and journaled) and written in one statement per flush,
 * when `flushSize` hits wait or `flushIntervalMs` after the oldest. A failed flush keeps its rows (and their
 * journal segments) for the next one.
 *
 * Group commit: the requests of one turn of the event loop share one journal line, written in a `setImmediate`,
 * and their answers all wait for it. Under load many requests arrive per turn; a write per request showed in the
 * profile.
 */
export function createCaptureWriter(options: CaptureWriterOptions): CaptureWriter {
  const journal = openJournal(options.journalDir)
  const deadLetter = openDeadLetter(options.deadLetterDir, options.logger)
  const maxBytes = options.maxPendingBytes ?? Infinity
  let pending = new PendingRows()
  let unwritten: Unwritten[] = []
  /** The bytes of the rows in `unwritten`. */
  let unwrittenBytes = 0
  /** Rows already written: the next flush's rows take over their buffers. */
  let spare: PendingRows | undefined
  let turn: { done: Promise<void>, resolve: () => void, reject: (error: unknown) => void } | undefined
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  /** A flush for size is queued: while one waits, more hits need not queue another (they would make tiny ones). */
  let sizeFlushQueued = false

  /** Writes this turn's journal line, then lets its requests be answered. */
  const journalTurn = () => {
    const waiting = turn
    turn = undefined
    if (!waiting) return
    try {
      journal.write(pending.journalLine())
      waiting.resolve()
    }
    catch (error) {
      waiting.reject(error)
    }
  }

  const flushNow = async () => {
    sizeFlushQueued = false
    journalTurn() // rows not journaled yet belong to the segment about to close
    if (!pending.empty) {
      unwritten.push({ rows: pending, segment: journal.rotate(), bytes: pending.bytes })
      unwrittenBytes += pending.bytes
      pending = new PendingRows(pending, spare)
      spare = undefined
    }
    // In order, each in one statement; a failure keeps it and those after it for the next flush. Rows the database
    // refuses for what they hold are set aside instead: retrying them would block every flush after them.
    const timed = unwritten.length > 0 ? metrics.captureFlushDuration.startTimer() : undefined
    while (unwritten.length > 0) {
      const next = unwritten[0]!
      const refused: Rejected[] = []
      try {
        await writeIsolating(options.prepared, next.rows, (row) => refused.push(row))
      }
      catch (error) {
        timed?.({ outcome: 'failed' })
        options.onError(error)
        return
      }
      deadLetter.putAll(refused)
      unwritten = unwritten.slice(1)
      unwrittenBytes -= next.bytes
      if (next.segment) journal.remove(next.segment)
      spare = next.rows
    }
    timed?.({ outcome: 'ok' })
  }

  /**
   * A dead process's journal segment: written first, its unreadable lines and refused rows set aside. When the
   * database does not take writes now (or did not for an earlier segment: `tryNow` false), its rows wait for the
   * next flushes (boot goes on), and the segment stays until they are written. Resolves whether it was written.
   */
  const replay = async (segment: string, tryNow: boolean): Promise<boolean> => {
    let lines: string[]
    try {
      lines = journal.read(segment)
    }
    catch (error) {
      try {
        deadLetter.putSegment(segment, error instanceof Error ? error.message : String(error))
        options.logger.warn(`capture: journal segment ${segment} could not be read; moved to ${deadLetter.dir}`)
      }
      catch {
        options.logger.warn(`capture: journal segment ${segment} could not be read nor moved; it is left where it is`)
      }
      return true
    }
    const rows = new PendingRows()
    const refused: Rejected[] = []
    for (const line of lines) {
      try {
        for (const batch of batchesOfLine(JSON.parse(line))) rows.add(batch)
      }
      catch (error) {
        // Not a record of ours (or the last line, cut short by the crash itself: it was never acknowledged).
        refused.push({ table: 'journal', code: 'unreadable', reason: error instanceof Error ? error.message : String(error), row: line })
      }
    }
    const written = tryNow && await writeIsolating(options.prepared, rows, (row) => refused.push(row)).then(() => true, (error: unknown) => {
      options.onError(error)
      return false
    })
    deadLetter.putAll(refused)
    if (!written) {
      journal.keep(segment)
      unwritten.push({ rows, segment, bytes: rows.bytes })
      unwrittenBytes += rows.bytes
      return false
    }
    journal.remove(segment)
    options.logger.info(`capture: wrote ${rows.hits} journaled hit(s) left by an earlier process`)
    return true
  }
  const flush = () => {
    running = running.then(flushNow)
    return running
  }

  return {
    add(batch) {
      pending.add(batch)
      if (!turn) {
        let resolve!: () => void
        let reject!: (error: unknown) => void
        const done = new Promise<void>((yes, no) => {
          resolve = yes
          reject = no
        })
        turn = { done, resolve, reject }
        setImmediate(journalTurn)
      }
      const journaled = turn.done
      if (pending.hits >= options.flushSize && !sizeFlushQueued) {
        sizeFlushQueued = true
        void flush()
      }
      return journaled
    },
    flush,
    async start() {
      // Hits a crashed process acknowledged but had not written: write them first, then forget the segment.
      let written = true
      for (const segment of journal.orphans()) written = await replay(segment, written) && written
      timer = setInterval(() => void flush(), options.flushIntervalMs)
      timer.unref()
    },
    async stop() {
      clearInterval(timer)
      await flush()
      journal.close()
    },
    get full() {
      return pending.bytes + unwrittenBytes >= maxBytes || journal.bytes >= maxBytes
    },
    get deadLettered() {
      return deadLetter.count
    },
    get queuedHits() {
      return pending.hits + unwritten.reduce((sum, next) => sum + next.rows.hits, 0)
    },
    get journalBytes() {
      return journal.bytes
    },
  }
}
