import { dataErrorCode } from '../../../core/db/data-error.ts'
import type { RunPrepared } from '../../../core/db/prepared.ts'
import { valuesOf } from './columns.ts'
import { EVENT_COLUMNS, SESSION_COLUMNS, VISIT_COLUMNS } from './tables.ts'
import type { Rejected } from './dead-letter.ts'
import { PendingRows } from './pending.ts'
import type { CaptureBatch } from './rows.ts'
import { writeBatch } from './write-batch.ts'

/**
 * Writes a flush; when the database refuses it for its data, splits it to find the rows it refuses, writes the
 * others, and hands each refused row to `reject`. Writing a visit again changes nothing (its counts come only from
 * the events a statement inserted), so a visit is sent with each part of its events. Any other error is thrown:
 * the rows written so far are written again by the retry, which inserts nothing twice.
 */
export async function writeIsolating(prepared: RunPrepared, rows: PendingRows, reject: (row: Rejected) => void): Promise<void> {
  try {
    await writeBatch(prepared, rows)
    return
  }
  catch (error) {
    if (!dataErrorCode(error)) throw error
  }
  await writeSplit(prepared, rows.units(), reject)
}

/** `units` failed together: each half is tried alone, down to one visit's rows. */
async function writeSplit(prepared: RunPrepared, units: readonly CaptureBatch[], reject: (row: Rejected) => void): Promise<void> {
  if (units.length === 1) return writeUnit(prepared, units[0]!, reject)
  const half = Math.ceil(units.length / 2)
  for (const part of [units.slice(0, half), units.slice(half)]) {
    if (await attempt(prepared, part) !== undefined) await writeSplit(prepared, part, reject)
  }
}

/** One visit's rows that fail together: the visit alone, then its events (halved) with it, then its withdrawal. */
async function writeUnit(prepared: RunPrepared, unit: CaptureBatch, reject: (row: Rejected) => void): Promise<void> {
  let visit = unit.visit
  if (visit) {
    const error = await attempt(prepared, [{ events: [], visit }])
    if (error) {
      reject({ table: 'visits', ...error, row: valuesOf(VISIT_COLUMNS, visit) })
      visit = undefined
    }
  }
  const events = async (list: CaptureBatch['events']): Promise<void> => {
    const error = await attempt(prepared, [visit ? { events: list, visit } : { events: list }])
    if (!error) return
    if (list.length === 1) return reject({ table: 'page_events', ...error, row: valuesOf(EVENT_COLUMNS, list[0]!) })
    const half = Math.ceil(list.length / 2)
    await events(list.slice(0, half))
    await events(list.slice(half))
  }
  if (unit.events.length > 0) await events(unit.events)
  const withdrawn = unit.withdrawn
  if (withdrawn) {
    const error = await attempt(prepared, [{ events: [], withdrawn }])
    if (error) reject({ table: 'withdrawals', ...error, row: valuesOf(SESSION_COLUMNS, withdrawn) })
  }
}

/** Writes these batches in one flush; the data error that stopped it, or undefined once written. */
async function attempt(prepared: RunPrepared, batches: readonly CaptureBatch[]): Promise<{ code: string, reason: string } | undefined> {
  const rows = new PendingRows()
  for (const batch of batches) rows.add(batch)
  try {
    await writeBatch(prepared, rows)
    return undefined
  }
  catch (error) {
    const code = dataErrorCode(error)
    if (!code) throw error
    return { code, reason: error instanceof Error ? error.message : String(error) }
  }
}
