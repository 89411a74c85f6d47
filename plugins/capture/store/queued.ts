import { EVENT_COLUMNS, fromTuple, SESSION_COLUMNS, toTuple, VISIT_COLUMNS } from './columns.ts'
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

export function toQueued(batch: CaptureBatch): QueuedBatch {
  const queued: QueuedBatch = { events: batch.events.map((event) => toTuple(EVENT_COLUMNS, event)).join(','), hits: batch.events.length }
  if (batch.visit) queued.visit = { row: batch.visit, tuple: toTuple(VISIT_COLUMNS, batch.visit) }
  if (batch.withdrawn) queued.withdrawn = batch.withdrawn
  return queued
}

/** One journal line: `{"e":[events],"v":visit|null,"w":withdrawal|null}`, each row as its value array. */
export function journalLine(queued: QueuedBatch): string {
  const withdrawn = queued.withdrawn ? toTuple(SESSION_COLUMNS, queued.withdrawn) : 'null'
  return `{"e":[${queued.events}],"v":${queued.visit?.tuple ?? 'null'},"w":${withdrawn}}\n`
}

interface JournalRecord { e: unknown[][], v: unknown[] | null, w: unknown[] | null }

/** A journal line read back; lines written before this format (`{events, visit, withdrawn}` objects) are read too. */
export function fromJournal(record: unknown): QueuedBatch {
  if (record && typeof record === 'object' && 'events' in record) return toQueued(record as CaptureBatch)
  const { e, v, w } = record as JournalRecord
  const batch: CaptureBatch = { events: e.map((values) => fromTuple<PageEventRow>(EVENT_COLUMNS, values)) }
  if (v) batch.visit = fromTuple<VisitRow>(VISIT_COLUMNS, v)
  if (w) batch.withdrawn = fromTuple<SessionKey>(SESSION_COLUMNS, w)
  return toQueued(batch)
}
