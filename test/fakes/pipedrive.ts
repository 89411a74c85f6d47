/**
 * A fake Pipedrive serving the API v2 lists the poller reads, `GET /api/v2/deals` and `GET /api/v2/persons`, over a
 * small table of persons and deals the tests change. It checks what Pipedrive checks and answers with its bodies:
 * - auth: the API token in `x-api-token` (core API concepts → Authentication); none or a wrong one → 401
 *   `{ success: false, error: "unauthorized access", errorCode: 401, error_info }`;
 * - the query: v2 validates strictly: limit 1–500, RFC 3339 `updated_since`, `sort_by` id/update_time/add_time,
 *   at most 100 `ids`, at most 15 `custom_fields`, a cursor it issued; anything else → 400 with the v2 envelope
 *   (`code: "ERR_SCHEMA_VALIDATION_FAILED"`; that code and wording are the fake's, Pipedrive's exact text varies);
 * - lists: `{ success: true, data, additional_data: { next_cursor } }`, next_cursor null on the last page; deals and
 *   persons in the v2 shapes (person_id a number, `emails: [{ value, primary, label }]`, RFC 3339 times);
 * - throttling: the daily token budget, 429 `{ success: false, error: "daily request budget exceeded", errorCode: 429 }`
 *   with `retry-after` in seconds (observed in production, 2026), and the 2-second burst window with the
 *   x-ratelimit-limit/remaining/reset headers of the rate-limiting guide (the burst body wording is the fake's own).
 */
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from './server.ts'
import { reply } from './helpers.ts'

export interface FakePipedriveInit {
  apiToken?: string
  /** Stage ids of the company's pipelines (all in pipeline 1 here). */
  stageIds?: number[]
}

export interface PipedrivePersonInit {
  email?: string | null
  at: Date
  labelIds?: number[]
  customFields?: Record<string, unknown>
}

export interface FakePipedrive extends FakeServer {
  apiToken: string
  /** Every list request, parsed: resource and query. */
  lists: { resource: string, query: Record<string, string> }[]
  addPerson: (init: PipedrivePersonInit) => number
  updatePerson: (id: number, changes: { labelIds?: number[], customFields?: Record<string, unknown> }, at: Date) => void
  addDeal: (init: { personId: number | null, stageId: number, at: Date }) => number
  moveDeal: (id: number, stageId: number, at: Date) => void
  /** The next list answers 429 for the daily token budget (retry-after in seconds). */
  throttleNext: () => void
  /** The next list answers 429 for the 2-second burst window (x-ratelimit headers, no retry-after). */
  burstNext: () => void
  delay: (ms: number) => void
}

const ERROR_INFO = 'Please check developers.pipedrive.com for more information about Pipedrive API.'
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/
const QUERY_KEYS: Record<string, Set<string>> = {
  deals: new Set(['filter_id', 'ids', 'owner_id', 'person_id', 'org_id', 'pipeline_id', 'stage_id', 'status', 'updated_since', 'updated_until', 'sort_by', 'sort_direction', 'include_fields', 'custom_fields', 'limit', 'cursor']),
  persons: new Set(['filter_id', 'ids', 'owner_id', 'org_id', 'updated_since', 'updated_until', 'sort_by', 'sort_direction', 'include_fields', 'custom_fields', 'limit', 'cursor']),
}

const failure = (status: number, error: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>): FakeReply =>
  reply(status, { success: false, error, ...extra, error_info: ERROR_INFO, data: null, additional_data: null }, headers)
const invalid = (error: string) => failure(400, `Validation failed: ${error}`, { code: 'ERR_SCHEMA_VALIDATION_FAILED' })

/** Pipedrive's answers, to queue for failure scenarios. */
export const pipedriveErrors = {
  unauthorized: (): FakeReply => failure(401, 'unauthorized access', { errorCode: 401 }),
  dailyBudget: (retryAfterSeconds = 3939): FakeReply => failure(429, 'daily request budget exceeded', { errorCode: 429 }, { 'retry-after': String(retryAfterSeconds) }),
  burst: (): FakeReply => failure(429, 'Request over limit', { errorCode: 429 }, { 'x-ratelimit-limit': '20', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2' }),
}

const rfc3339 = (at: Date) => `${at.toISOString().slice(0, 19)}Z`

export async function startFakePipedrive(init: FakePipedriveInit = {}): Promise<FakePipedrive> {
  const apiToken = init.apiToken ?? '659c9fddb16335e48cc67114694b52074e812e03'
  const stageIds = new Set(init.stageIds ?? [1, 2, 3, 4, 5, 6])
  const persons = new Map<number, Record<string, any>>()
  const deals = new Map<number, Record<string, any>>()
  const lists: FakePipedrive['lists'] = []
  const pending: FakeReply[] = []
  let delayMs = 0
  let nextPerson = 1
  let nextDeal = 1

  function list(request: RecordedRequest, resource: 'deals' | 'persons'): FakeReply {
    if (request.headers['x-api-token'] !== apiToken) return pipedriveErrors.unauthorized()
    const query = Object.fromEntries(new URL(request.path, 'http://fake').searchParams)
    lists.push({ resource, query })
    const throttled = pending.shift()
    if (throttled) return throttled
    const unknown = Object.keys(query).find((key) => !QUERY_KEYS[resource]!.has(key))
    if (unknown) return invalid(`${unknown}: Unrecognized key`)
    const limit = query.limit === undefined ? 100 : Number(query.limit)
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) return invalid('limit: Number must be between 1 and 500')
    if (query.updated_since !== undefined && !RFC3339.test(query.updated_since)) return invalid('updated_since: Invalid datetime, expected RFC3339')
    if (query.sort_by !== undefined && !['id', 'update_time', 'add_time'].includes(query.sort_by)) return invalid('sort_by: Invalid enum value')
    if (query.sort_direction !== undefined && !['asc', 'desc'].includes(query.sort_direction)) return invalid('sort_direction: Invalid enum value')
    if (query.stage_id !== undefined && !/^\d+$/.test(query.stage_id)) return invalid('stage_id: Expected number, received string')
    const ids = query.ids?.split(',')
    if (ids && (ids.length > 100 || ids.some((id) => !/^\d+$/.test(id)))) return invalid('ids: at most 100 comma-separated ids')
    const customFields = query.custom_fields?.split(',')
    if (customFields && customFields.length > 15) return invalid('custom_fields: at most 15 keys')
    const offset = query.cursor === undefined ? 0 : readCursor(query.cursor)
    if (offset === undefined) return invalid('cursor: Invalid cursor')

    const since = query.updated_since === undefined ? -Infinity : Date.parse(query.updated_since)
    let rows = [...(resource === 'deals' ? deals : persons).values()]
      .filter((row) => !row.is_deleted && Date.parse(row.update_time) >= since)
      .filter((row) => !ids || ids.includes(String(row.id)))
      .filter((row) => query.stage_id === undefined || row.stage_id === Number(query.stage_id))
    const key = query.sort_by ?? 'id'
    const direction = query.sort_direction === 'desc' ? -1 : 1
    rows.sort((a, b) => direction * ((key === 'id' ? a.id - b.id : Date.parse(a[key]) - Date.parse(b[key])) || a.id - b.id))
    rows = rows.map((row) => (customFields && row.custom_fields ? { ...row, custom_fields: Object.fromEntries(customFields.map((field) => [field, row.custom_fields[field] ?? null])) } : row))
    const page = rows.slice(offset, offset + limit)
    const next = offset + limit < rows.length ? Buffer.from(JSON.stringify({ offset: offset + limit })).toString('base64url') : null
    return reply(200, { success: true, data: page, additional_data: { next_cursor: next } })
  }

  const server = await startFakeServer(async (request) => {
    const path = request.path.split('?')[0]!
    const route = /^\/api\/v2\/(deals|persons)$/.exec(path)
    if (request.method === 'GET' && route) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
      return list(request, route[1] as 'deals' | 'persons')
    }
    return failure(404, 'Unknown method .')
  })

  return {
    ...server,
    apiToken,
    lists,
    addPerson: ({ email, at, labelIds = [], customFields = {} }) => {
      const id = nextPerson++
      persons.set(id, {
        id, name: email ? email.trim().split('@')[0] : `Person ${id}`, owner_id: 1, org_id: null,
        add_time: rfc3339(at), update_time: rfc3339(at),
        emails: email ? [{ value: email, primary: true, label: 'work' }] : [], phones: [],
        is_deleted: false, visible_to: 3, label_ids: labelIds, custom_fields: customFields,
      })
      return id
    },
    updatePerson: (id, changes, at) => {
      const person = persons.get(id)!
      if (changes.labelIds) person.label_ids = changes.labelIds
      if (changes.customFields) person.custom_fields = { ...person.custom_fields, ...changes.customFields }
      person.update_time = rfc3339(at)
    },
    addDeal: ({ personId, stageId, at }) => {
      if (!stageIds.has(stageId)) throw new Error(`no stage ${stageId}`)
      const id = nextDeal++
      deals.set(id, {
        id, title: `Deal ${id}`, owner_id: 1, person_id: personId, org_id: null, pipeline_id: 1, stage_id: stageId,
        value: 0, currency: 'EUR', add_time: rfc3339(at), update_time: rfc3339(at), stage_change_time: rfc3339(at),
        is_deleted: false, status: 'open', probability: null, custom_fields: {},
      })
      return id
    },
    moveDeal: (id, stageId, at) => {
      const deal = deals.get(id)!
      Object.assign(deal, { stage_id: stageId, update_time: rfc3339(at), stage_change_time: rfc3339(at) })
    },
    throttleNext: () => void pending.push(pipedriveErrors.dailyBudget()),
    burstNext: () => void pending.push(pipedriveErrors.burst()),
    delay: (ms) => void (delayMs = ms),
  }
}

function readCursor(cursor: string): number | undefined {
  try {
    const offset = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { offset?: unknown }).offset
    return typeof offset === 'number' && Number.isInteger(offset) && offset >= 0 ? offset : undefined
  }
  catch {
    return undefined
  }
}
