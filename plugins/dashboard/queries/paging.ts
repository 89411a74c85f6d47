/**
 * Newest-first pages over (time, id), the way the export pages over its lists: a page ends at a position, and the
 * next page starts strictly before the last row shown, so no row is missed or repeated while rows arrive. Times
 * travel as ISO text with microseconds (PostgreSQL's precision), never as JS Dates (milliseconds would skip rows).
 */
import { apiError } from '../../../core/http/errors.ts'

/** Rows a dashboard list shows at once. */
export const PAGE_ROWS = 50

/** Where a page ends (exclusive): a row's time and id; null for the newest rows. */
export interface PageEnd { time: string, id: string }

/** A row's paging time as ISO 8601 text with microseconds, in UTC (`2026-11-26T02:55:01.123456Z`). */
export function sqlIsoTime(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
}

/** `(time, id) < ($t, $i)`: with no end given, every row (the largest UUID sorts after any id). */
export function sqlBefore(time: string, id: string, timeParam: number): string {
  return `(${time}, ${id}) < (coalesce($${timeParam}::timestamptz, 'infinity'), coalesce($${timeParam + 1}::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))`
}

const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/

/** The `before` query parameter: the position of the last row of the page before. A hand-made one is answered 400. */
export function readCursor(raw: string | undefined): PageEnd | null {
  if (raw === undefined || raw === '') return null
  const match = CURSOR.exec(raw)
  if (!match || Number.isNaN(Date.parse(match[1]!))) throw apiError(400, { message: 'before: not a page position (follow the "Older" link)' })
  return { time: match[1]!, id: match[2]! }
}

export function writeCursor(row: { paging_time: string, id: string }): string {
  return `${row.paging_time}_${row.id}`
}

/** Rows asks one more than it shows: the extra row says that an older page exists. */
export function splitPage<R extends { paging_time: string, id: string }>(rows: R[]): { rows: R[], older: string | null } {
  if (rows.length <= PAGE_ROWS) return { rows, older: null }
  const shown = rows.slice(0, PAGE_ROWS)
  return { rows: shown, older: writeCursor(shown.at(-1)!) }
}
