import { EVENT_COLUMNS, fromTuple, SESSION_COLUMNS, tupleWriter, VISIT_COLUMNS } from './columns.ts'
import type { CaptureBatch, PageEventRow, SessionKey, VisitRow } from './rows.ts'

/**
 * A request's rows as the writer keeps them until the flush: already serialized once, as the journal line and the
 * statement's parameters both need them (serializing the batch twice showed in the /collect profile).
 */
export interface QueuedBatch {
  /** The page events' value arrays, comma-separated: a piece of the flush's JSON array. */
  events: string
  hits: number
  visit?: { row: VisitRow, tuple: string }
  withdrawn?: SessionKey
}

export const eventTuple = tupleWriter(EVENT_COLUMNS)
export const visitTuple = tupleWriter(VISIT_COLUMNS)
export const sessionTuple = tupleWriter(SESSION_COLUMNS)

export function toQueued(batch: CaptureBatch): QueuedBatch {
  const { events } = batch
  const queued: QueuedBatch = { events: events.length === 1 ? eventTuple(events[0]!) : events.map(eventTuple).join(','), hits: events.length }
  if (batch.visit) queued.visit = { row: batch.visit, tuple: visitTuple(batch.visit) }
  if (batch.withdrawn) queued.withdrawn = batch.withdrawn
  return queued
}

/** One journal line: `{"e":[events],"v":visit|null,"w":withdrawal|null}`, each row as its value array. */
export function journalLine(queued: QueuedBatch): string {
  const withdrawn = queued.withdrawn ? sessionTuple(queued.withdrawn) : 'null'
  return `{"e":[${queued.events}],"v":${queued.visit?.tuple ?? 'null'},"w":${withdrawn}}\n`
}

interface JournalRecord { e: unknown[][], v: unknown[] | null, w: unknown[] | null }
interface LegacyRecord { events: PageEventRow[], visit?: VisitRow, withdrawn?: SessionKey }

/**
 * A journal line read back. Lines older versions wrote are read too: rows as `{events, visit, withdrawn}` objects,
 * and times as ISO text (fromTuple turns them into milliseconds).
 */
export function fromJournal(record: unknown): QueuedBatch {
  const { e, v, w } = record && typeof record === 'object' && 'events' in record ? asArrays(record as LegacyRecord) : record as JournalRecord
  const batch: CaptureBatch = { events: e.map((values) => fromTuple<PageEventRow>(EVENT_COLUMNS, values)) }
  if (v) batch.visit = fromTuple<VisitRow>(VISIT_COLUMNS, v)
  if (w) batch.withdrawn = fromTuple<SessionKey>(SESSION_COLUMNS, w)
  return toQueued(batch)
}

function asArrays({ events, visit, withdrawn }: LegacyRecord): JournalRecord {
  const values = <Row>(columns: readonly (readonly [keyof Row & string, string])[], row: Row) => columns.map(([name]) => row[name])
  return { e: events.map((row) => values(EVENT_COLUMNS, row)), v: visit ? values(VISIT_COLUMNS, visit) : null, w: withdrawn ? values(SESSION_COLUMNS, withdrawn) : null }
}
