import type { ConsolaInstance } from 'consola'
import type { RunPrepared } from '../../../core/db/prepared.ts'
import { openJournal } from './journal.ts'
import { fromJournal, journalLine, toQueued, type QueuedBatch } from './queued.ts'
import type { CaptureBatch } from './rows.ts'
import { writeBatch } from './write-batch.ts'

export interface CaptureWriter {
  /** Journals the batch and queues it for the next flush; resolves once journaled (answer only then). */
  add: (batch: CaptureBatch) => Promise<void>
  /** Writes everything queued so far; resolves once it is committed. Flushes never overlap. */
  flush: () => Promise<void>
  /** Batches waiting for a flush. */
  pending: () => number
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

/**
 * The hot path's only write: hits are buffered in memory (and journaled) and written in one statement per flush,
 * when `flushSize` hits wait or `flushIntervalMs` after the oldest. A failed flush keeps its batches (and their
 * journal segments) for the next one.
 */
export function createCaptureWriter(options: CaptureWriterOptions): CaptureWriter {
  const journal = openJournal(options.journalDir)
  let queue: QueuedBatch[] = []
  let segments: string[] = []
  let hits = 0
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()

  const flushNow = async () => {
    if (queue.length === 0) return
    const segment = journal.rotate()
    if (segment) segments.push(segment)
    const taken = queue
    const done = segments
    queue = []
    segments = []
    hits = 0
    try {
      await writeBatch(options.prepared, taken)
      for (const file of done) journal.remove(file)
    }
    catch (error) {
      // Keep them for the next flush; their journal segments stay on disk until then.
      queue = [...taken, ...queue]
      segments = [...done, ...segments]
      hits += taken.reduce((sum, b) => sum + b.hits, 0)
      options.onError(error)
    }
  }
  const flush = () => {
    running = running.then(flushNow)
    return running
  }

  return {
    async add(batch) {
      const queued = toQueued(batch)
      const journaled = journal.append(journalLine(queued))
      queue.push(queued)
      hits += queued.hits
      if (hits >= options.flushSize) void flush()
      await journaled
    },
    flush,
    pending: () => queue.length,
    async start() {
      // Hits a crashed process acknowledged but had not written: write them first, then forget the segment.
      for (const segment of journal.orphans()) {
        const batches = journal.read(segment).map(fromJournal)
        await writeBatch(options.prepared, batches)
        journal.remove(segment)
        options.logger.info(`capture: wrote ${batches.length} journaled request(s) left by an earlier process`)
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
