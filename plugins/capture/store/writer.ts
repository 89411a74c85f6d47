import type { ConsolaInstance } from 'consola'
import type { RunPrepared } from '../../../core/db/prepared.ts'
import { openJournal } from './journal.ts'
import { batchesOfLine, PendingRows } from './pending.ts'
import type { CaptureBatch } from './rows.ts'
import { writeBatch } from './write-batch.ts'

export interface CaptureWriter {
  /** Journals the batch and queues it for the next flush; resolves once journaled (answer only then). */
  add: (batch: CaptureBatch) => Promise<void>
  /** Writes everything queued so far; resolves once it is committed. Flushes never overlap. */
  flush: () => Promise<void>
  start: () => Promise<void>
  /** Stops the timer and flushes what is left (shutdown). */
  stop: () => Promise<void>
}

export interface CaptureWriterOptions {
  prepared: RunPrepared
  journalDir: string
  flushSize: number
  flushIntervalMs: number
  logger: ConsolaInstance
  onError: (error: unknown) => void
}

/** Rows taken for a flush, and the journal segment that holds them until they are committed. */
interface Unwritten { rows: PendingRows, segment: string | undefined }

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
  let pending = new PendingRows()
  let unwritten: Unwritten[] = []
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
      unwritten.push({ rows: pending, segment: journal.rotate() })
      pending = new PendingRows(pending, spare)
      spare = undefined
    }
    // In order, each in one statement; a failure keeps it and those after it for the next flush.
    while (unwritten.length > 0) {
      const next = unwritten[0]!
      try {
        await writeBatch(options.prepared, next.rows)
      }
      catch (error) {
        options.onError(error)
        return
      }
      unwritten = unwritten.slice(1)
      if (next.segment) journal.remove(next.segment)
      spare = next.rows
    }
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
      for (const segment of journal.orphans()) {
        const rows = new PendingRows()
        const records = journal.read(segment)
        for (const record of records) for (const batch of batchesOfLine(record)) rows.add(batch)
        if (!rows.empty) await writeBatch(options.prepared, rows)
        journal.remove(segment)
        options.logger.info(`capture: wrote ${rows.hits} journaled hit(s) left by an earlier process`)
      }
      timer = setInterval(() => void flush(), options.flushIntervalMs)
      timer.unref()
    },
    async stop() {
      clearInterval(timer)
      await flush()
      journal.close()
    },
  }
}
