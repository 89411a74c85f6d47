import * as v from 'valibot'
import type { H3Event } from 'h3'
import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import type { RouteTable } from '../../../core/http/routes.ts'
import { between, formatInstant, positionOf, tieToUuid, toSqlTime, type Position } from './instant.ts'
import { invalidParams, PageParams } from './params.ts'
import { readPage } from '../queries/lists.ts'
import type { Horizon } from './horizon.ts'

/**
 * One time-paged export list: its statement (queries/lists.ts) answers a page of rows in (paging time, id) order;
 * `timeField` names the record's field that holds the paging time.
 */
export interface PagedList {
  path: string
  summary: string
  description: string
  record: v.GenericSchema
  statement: PreparedStatement
  timeField: string
  horizon: Horizon
}

/**
 * Where the window ended: the given or default `until` (or `since`, when that is later). On the last page, where
 * `next_since` is null, it is the `since` to resume from later: every record before it has been listed.
 */
export const UNTIL_HEADER = 'x-export-until'

const BEGINNING = { time: '-infinity', id: tieToUuid(0n) }

export const Pagination = v.object({
  count: v.pipe(v.number(), v.integer(), v.description('Number of records in this page')),
  has_more: v.pipe(v.boolean(), v.description('True when more records follow')),
  next_since: v.pipe(v.nullable(v.string()), v.description('Value to pass as `since` on the next call; null when no more. An ISO 8601 timestamp whose fraction digits past the microsecond carry the tiebreak between records of one time.')),
})

export function addPagedList(routes: RouteTable, prepared: RunPrepared, list: PagedList): void {
  routes.add({
    method: 'GET',
    path: list.path,
    auth: 'key',
    summary: list.summary,
    description: list.description,
    tags: ['Export'],
    query: PageParams,
    invalid: invalidParams,
    responses: { 200: v.object({ success: v.literal(true), data: v.array(list.record), pagination: Pagination }) },
    handler: async (event: H3Event, { query }) => {
      const siteId = event.context.site!.id
      const until = query.until ?? await list.horizon(siteId)
      event.res.headers.set(UNTIL_HEADER, formatInstant(query.since && before(until, query.since) ? query.since : until))
      const since = query.since ? { time: toSqlTime(query.since), id: tieToUuid(query.since.tie) } : BEGINNING
      const rows = query.since && !before(query.since, until)
        ? []
        : await readPage(prepared, list.statement, {
          siteId, sinceTime: since.time, sinceId: since.id, untilTime: toSqlTime(until), untilId: tieToUuid(until.tie), rows: query.limit + 1,
        })
      const hasMore = rows.length > query.limit
      const page = hasMore ? rows.slice(0, query.limit) : rows
      const positionAt = (index: number) => positionOf(rows[index]![list.timeField] as string, rows[index]!.paging_id)
      return {
        success: true,
        data: page.map(({ paging_id: _id, ...record }) => record),
        pagination: {
          count: page.length,
          has_more: hasMore,
          next_since: hasMore ? formatInstant(between(positionAt(query.limit - 1), positionAt(query.limit))) : null,
        },
      }
    },
  })
}

function before(a: Position, b: Position): boolean {
  return a.micros < b.micros || (a.micros === b.micros && a.tie < b.tie)
}
