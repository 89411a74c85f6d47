import { tupleReader, tupleWriter } from './columns.ts'
import { EVENT_COLUMNS, SESSION_COLUMNS, VISIT_COLUMNS } from './tables.ts'
import { mergeVisit, type CaptureBatch, type SessionKey, type VisitRow } from './rows.ts'

const eventTuple = tupleWriter(EVENT_COLUMNS)
const visitTuple = tupleWriter(VISIT_COLUMNS)
const sessionTuple = tupleWriter(SESSION_COLUMNS)
const readEvent = tupleReader(EVENT_COLUMNS)
const readVisit = tupleReader(VISIT_COLUMNS)
const readSession = tupleReader(SESSION_COLUMNS)

const COMMA = 0x2c
const OPEN = 0x5b
const CLOSE = 0x5d
/** jsonb's binary format is a version byte (1), then the JSON text. */
const JSONB_VERSION = 1
/** An empty array as a jsonb parameter. */
export const EMPTY_JSONB_ARRAY: Buffer = Buffer.from([JSONB_VERSION, OPEN, CLOSE])

/**
 * A JSON array of row tuples, kept as UTF-8 bytes in a buffer outside the JS heap. Rows wait up to a flush
 * interval: held as strings, they were copied by every young-generation GC until promoted, which made those GCs
 * three times slower under the capture benchmark. The bytes start with jsonb's binary-format version byte, so the
 * array is sent as the statement's parameter as it stands.
 */
class TupleBytes {
  private buf: Buffer
  /** Bytes used: the version byte, '[', then the tuples, separated by commas. */
  private length = 2
  private journaled = 2
  count = 0

  /** `reuse`: a buffer an earlier flush is done with (allocating one per flush made V8 run full GCs for it). */
  constructor(capacity: number, reuse?: Buffer) {
    this.buf = reuse ?? Buffer.allocUnsafe(Math.max(capacity, 1024))
    this.buf[0] = JSONB_VERSION
    this.buf[1] = OPEN
  }

  /** Appends a tuple; returns where its bytes start (they end at `size`). */
  push(json: string): number {
    // UTF-8 needs at most 3 bytes per UTF-16 unit; one more for the comma and one for the closing ']'.
    this.reserve(this.length + 2 + json.length * 3)
    if (this.count++ > 0) this.buf[this.length++] = COMMA
    const start = this.length
    this.length += this.buf.write(json, start)
    return start
  }

  text(start: number, end: number): string {
    return this.buf.toString('utf8', start, end)
  }

  /** The tuples pushed since the last call, comma-separated (a journal line's part). */
  sinceJournal(): Buffer {
    const from = this.journaled === 2 ? 2 : this.journaled + 1 // past the comma before the first new tuple
    this.journaled = this.length
    return this.buf.subarray(Math.min(from, this.length), this.length)
  }

  /** The whole array as a jsonb parameter. Nothing may be pushed after it. */
  param(): Buffer {
    this.buf[this.length] = CLOSE
    return this.buf.subarray(0, this.length + 1)
  }

  /** Bytes in use: the size hint for the next flush's buffer. */
  get size(): number {
    return this.length
  }

  /** The buffer, for a later flush to reuse once this one is written. */
  get buffer(): Buffer {
    return this.buf
  }

  /**
   * Keeps only the tuples of these slots, taken in byte order (a visit's earlier tuples once merged), moved down in
   * place; each slot's range is updated to where its tuple is now. Nothing may be pushed after it.
   */
  keepOnly(order: Uint32Array, ranges: SlotRanges): void {
    let at = 2
    for (let i = 0; i < order.length; i++) {
      const slot = order[i]!
      const start = ranges.starts[slot]!
      const end = ranges.ends[slot]!
      if (i > 0) this.buf[at++] = COMMA
      this.buf.copyWithin(at, start, end) // leftwards only: `at` never passes `start`
      ranges.starts[slot] = at
      ranges.ends[slot] = at += end - start
    }
    this.length = at
    this.count = order.length
  }

  private reserve(needed: number): void {
    if (needed <= this.buf.length) return
    const grown = Buffer.allocUnsafe(Math.max(needed, this.buf.length * 2))
    this.buf.copy(grown, 0, 0, this.length)
    this.buf = grown
  }
}

/**
 * Where each visit's latest tuple is in the visits' bytes, by slot (one per visit): numbers in typed arrays, so a
 * visit seen again and a flush that drops merged tuples allocate nothing. Kept as a pair per visit in a Map, they
 * were a fifth of what survived young-generation GCs under the capture benchmark (rows wait up to a flush interval).
 */
class SlotRanges {
  starts = new Float64Array(1024)
  ends = new Float64Array(1024)
  count = 0

  /** A new slot for a tuple at start…end; returns its number. */
  add(start: number, end: number): number {
    if (this.count === this.starts.length) {
      this.starts = grown(this.starts)
      this.ends = grown(this.ends)
    }
    this.starts[this.count] = start
    this.ends[this.count] = end
    return this.count++
  }

  /** The slots in the byte order of their tuples. */
  inByteOrder(): Uint32Array {
    const order = new Uint32Array(this.count)
    for (let i = 0; i < order.length; i++) order[i] = i
    return order.sort((a, b) => this.starts[a]! - this.starts[b]!)
  }
}

function grown(values: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const bigger = new Float64Array(values.length * 2)
  bigger.set(values)
  return bigger
}

/** The rows of the requests waiting for the next flush, as the JSON its statement reads and the journal keeps. */
export class PendingRows {
  hits = 0
  private readonly events: TupleBytes
  private readonly visits: TupleBytes
  /** Each visit's slot, by site and session: a later request of the visit replaces its tuple with a merged one. */
  private readonly visitAt = new Map<string, number>()
  private readonly visitRanges = new SlotRanges()
  private merged = 0
  private readonly withdrawn: SessionKey[] = []
  private withdrawnJournaled = 0

  /**
   * `previous`: the last flush's rows, whose sizes make a good first capacity; `spare`: rows already written, whose
   * buffers are taken over.
   */
  constructor(previous?: PendingRows, spare?: PendingRows) {
    this.events = new TupleBytes(previous?.events.size ?? 0, spare?.events.buffer)
    this.visits = new TupleBytes(previous?.visits.size ?? 0, spare?.visits.buffer)
  }

  get empty(): boolean {
    return this.events.count === 0 && this.visits.count === 0 && this.withdrawn.length === 0
  }

  /** About the memory the rows hold: their bytes (what the cap on waiting rows counts). */
  get bytes(): number {
    return this.events.size + this.visits.size + this.withdrawn.length * 64
  }

  add(batch: CaptureBatch): void {
    for (const event of batch.events) this.events.push(eventTuple(event))
    this.hits += batch.events.length
    if (batch.visit) this.addVisit(batch.visit)
    if (batch.withdrawn) this.withdrawn.push(batch.withdrawn)
  }

  /**
   * One statement cannot update a row twice, so a visit seen again before the flush is merged with its earlier
   * tuple (read back from the bytes), and only the merged one is sent.
   */
  private addVisit(visit: VisitRow): void {
    const key = `${visit.site_id}\u0000${visit.session_id}`
    const slot = this.visitAt.get(key)
    const ranges = this.visitRanges
    if (slot === undefined) {
      const start = this.visits.push(visitTuple(visit))
      this.visitAt.set(key, ranges.add(start, this.visits.size))
      return
    }
    const earlier = readVisit(JSON.parse(this.visits.text(ranges.starts[slot]!, ranges.ends[slot]!)) as unknown[])
    ranges.starts[slot] = this.visits.push(visitTuple(mergeVisit(earlier, visit)))
    ranges.ends[slot] = this.visits.size
    this.merged++
  }

  /**
   * The rows added since the last journal line, as the next one: `{"format":4,"e":[…],"v":[…],"w":[…]}\n`. A
   * merged visit is journaled as well; replaying merges it with its earlier tuple again, which changes nothing.
   */
  journalLine(): Buffer[] {
    const withdrawn = this.withdrawn.slice(this.withdrawnJournaled).map(sessionTuple).join(',')
    this.withdrawnJournaled = this.withdrawn.length
    return [LINE_START, this.events.sinceJournal(), LINE_VISITS, this.visits.sinceJournal(), Buffer.from(`],"w":[${withdrawn}]}\n`)]
  }

  /** The flush statement's parameters: page events and visits as jsonb, withdrawals as JSON text. */
  params(): { events: Buffer, visits: Buffer, withdrawn: string | undefined } {
    return {
      events: this.events.count > 0 ? this.events.param() : EMPTY_JSONB_ARRAY,
      visits: this.visits.count === 0 ? EMPTY_JSONB_ARRAY : this.latestVisits(),
      withdrawn: this.withdrawn.length > 0 ? `[${this.withdrawn.map(sessionTuple).join(',')}]` : undefined,
    }
  }

  /**
   * The rows back as batches: one per visit (its events, its latest tuple, its withdrawal) and one per event without
   * one. A flush the database refused for its data is split along these (isolate.ts), since a visit's counts come
   * from the events written with it. Read from the parameters: nothing may be added after it.
   */
  units(): CaptureBatch[] {
    const { events, visits } = this.params()
    const units = new Map<string, CaptureBatch>()
    const unitOf = (siteId: unknown, sessionId: unknown): CaptureBatch => {
      const key = `${String(siteId)}\u0000${String(sessionId)}`
      let unit = units.get(key)
      if (!unit) units.set(key, unit = { events: [] })
      return unit
    }
    const loose: CaptureBatch[] = []
    for (const values of parseParam(events)) {
      const row = readEvent(values)
      if (row.session_id === null) loose.push({ events: [row] })
      else unitOf(row.site_id, row.session_id).events.push(row)
    }
    for (const values of parseParam(visits)) {
      const visit = readVisit(values)
      unitOf(visit.site_id, visit.session_id).visit = visit
    }
    for (const key of this.withdrawn) unitOf(key.site_id, key.session_id).withdrawn = key
    return [...units.values(), ...loose]
  }

  /** Each visit's latest tuple only: the earlier tuples of merged visits are dropped from the bytes first. */
  private latestVisits(): Buffer {
    if (this.merged > 0) {
      this.visits.keepOnly(this.visitRanges.inByteOrder(), this.visitRanges)
      this.merged = 0
    }
    return this.visits.param()
  }
}

/** A jsonb parameter's rows: the JSON text after the version byte. */
function parseParam(param: Buffer): unknown[][] {
  return JSON.parse(param.toString('utf8', 1)) as unknown[][]
}

const LINE_START = Buffer.from('{"format":4,"e":[')
const LINE_VISITS = Buffer.from('],"v":[')

interface Line { format: 4, e: unknown[][], v: unknown[][], w: unknown[][] }

/** A journal line read back as batches; a line of another shape throws (the writer sets it aside as unreadable). */
export function batchesOfLine(record: unknown): CaptureBatch[] {
  if (!record || typeof record !== 'object') return []
  if (!('format' in record) || record.format !== 4) throw new TypeError('not a capture journal line (format 4)')
  const { e, v, w } = record as Line
  return [
    { events: e.map(readEvent) },
    ...v.map((values) => ({ events: [], visit: readVisit(values) })),
    ...w.map((values) => ({ events: [], withdrawn: readSession(values) })),
  ]
}
