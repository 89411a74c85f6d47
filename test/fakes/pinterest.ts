/**
 * A fake Pinterest API serving the Conversions API operation POST /v5/ad_accounts/{ad_account_id}/events. It checks
 * what the real endpoint checks (research: ad-platforms-microsoft-reddit-pinterest-x-crm-webhooks.md §A3) and answers
 * with Pinterest's bodies: 200 ConversionApiResponse, 422 DetailedError (code 953) with the same per-event results
 * when some event failed, `{ code, message }` otherwise. Queue pinterestErrors.* replies to inject failures.
 */
import { PINTEREST_API_VERSION } from '../../adapters/ads/pinterest/version.ts'
import { bearer, isObject, isSha256Hex, jsonBody } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from './server.ts'

export interface PinterestBatch {
  adAccountId: string
  /** Sent with `?test=true`: answered as usual, recorded nowhere in Pinterest. */
  test: boolean
  /** The events Pinterest processed. */
  data: Record<string, unknown>[]
}

export interface FakePinterest extends FakeServer {
  adAccountId: string
  accessToken: string
  /** Every request that reached event processing, in order. */
  batches: PinterestBatch[]
  /** Every processed event of live (not test) requests, in order. */
  readonly events: Record<string, unknown>[]
}

export interface FakePinterestOptions {
  adAccountId?: string
  accessToken?: string
  /** The fake's clock, in ms, for the 7-day window. */
  now?: () => number
}

interface EventResult { status: 'processed' | 'failed', error_message: string, warning_message: string }

/** Pinterest's error bodies, as the API sends them. */
export const pinterestErrors = {
  authenticationFailed: (): FakeReply => ({ status: 401, body: { code: 2, message: 'Authentication failed.' } }),
  notPermitted: (): FakeReply => ({ status: 403, body: { code: 29, message: 'You are not permitted to access that resource.' } }),
  invalidRequest: (detail: string): FakeReply => ({ status: 400, body: { code: 4196, message: `The request was invalid. ${detail}` } }),
  rateLimited: (): FakeReply => ({ status: 429, body: { code: 8, message: 'You have exceeded your rate limit. Try again later.' } }),
  rampedDown: (): FakeReply => ({ status: 503, body: { code: 4197, message: 'The endpoint has been ramped down and is currently not accepting any traffic.' } }),
  /** 422 DetailedError: not every event was processed; `details` holds the per-event results in request order. */
  notAllProcessed: (events: EventResult[]): FakeReply => ({
    status: 422,
    body: {
      code: 953,
      message: 'The action could not be processed properly due to some or all data provided being invalid.',
      details: { num_events_received: events.length, num_events_processed: events.filter((e) => e.status === 'processed').length, events },
    },
  }),
}

const ACTION_SOURCES = new Set(['web', 'offline', 'app_android', 'app_ios'])
/**
 * The reference's event_name list (v5 OpenAPI 5.23.0, `events/create`, read 2026-11-28), kept here rather than
 * imported from the adapter, so that a name the adapter wrongly thinks valid (such as `schedule`) is refused.
 */
const EVENT_NAMES = new Set([
  'add_payment_info', 'add_to_cart', 'add_to_wishlist', 'app_install', 'checkout', 'custom', 'initiate_checkout',
  'lead', 'page_visit', 'search', 'signup', 'subscribe', 'view_category', 'view_content', 'watch_video',
])
const HASHED_KEYS = ['em', 'ph', 'fn', 'ln', 'ge', 'db', 'ct', 'st', 'zp', 'country', 'external_id', 'hashed_maids']
const DAY_S = 86_400
/** Pinterest takes events at most 7 days old. */
const MAX_AGE_S = 7 * DAY_S
/** How far in the future the fake lets event_time be (clock skew). */
const FUTURE_SKEW_S = 10 * 60

export async function startFakePinterest(options: FakePinterestOptions = {}): Promise<FakePinterest> {
  const adAccountId = options.adAccountId ?? '549755885175'
  const accessToken = options.accessToken ?? 'pina_FakeConversionToken0123456789'
  const now = options.now ?? Date.now
  const batches: PinterestBatch[] = []

  const server = await startFakeServer((request) => {
    const url = new URL(request.path, 'http://fake.invalid')
    const path = /^\/(v\d+)\/ad_accounts\/([^/]+)\/events\/?$/.exec(url.pathname)
    if (!path || path[1] !== PINTEREST_API_VERSION || request.method !== 'POST') return { status: 404, body: { code: 404, message: `Not found: ${request.method} ${url.pathname}` } }
    if (bearer(request) !== accessToken) return pinterestErrors.authenticationFailed()
    if (path[2] !== adAccountId) return pinterestErrors.notPermitted()
    const data = readData(request)
    if (typeof data === 'string') return pinterestErrors.invalidRequest(data)
    const results = data.map((event) => checkEvent(event, now() / 1000))
    const test = url.searchParams.get('test') === 'true'
    batches.push({ adAccountId, test, data: data.filter((_, index) => results[index]!.status === 'processed') })
    if (results.some((result) => result.status === 'failed')) return pinterestErrors.notAllProcessed(results)
    return { status: 200, body: { num_events_received: data.length, num_events_processed: data.length, events: results } }
  })
  return {
    ...server,
    adAccountId,
    accessToken,
    batches,
    get events() {
      return batches.filter((batch) => !batch.test).flatMap((batch) => batch.data)
    },
  }
}

// --- internal ---

/** The `data` array, or why the request as a whole is invalid (schema errors answer 400 for the whole request). */
function readData(request: RecordedRequest): Record<string, unknown>[] | string {
  if (!String(request.headers['content-type'] ?? '').includes('application/json')) return 'Content-Type must be application/json.'
  const data = jsonBody(request)?.data
  if (!Array.isArray(data) || data.length === 0) return '"data" must be a non-empty array of events.'
  if (data.length > 1000) return `"data" holds at most 1000 events; this request has ${data.length}.`
  for (const [index, event] of data.entries()) {
    const problem = checkShape(event)
    if (problem) return `data[${index}]: ${problem}`
  }
  return data as Record<string, unknown>[]
}

/** The OpenAPI schema: required fields and types. */
function checkShape(event: unknown): string | undefined {
  if (!isObject(event)) return 'each event must be an object.'
  for (const key of ['event_name', 'action_source', 'event_id']) {
    if (typeof event[key] !== 'string' || !event[key]) return `"${key}" is a required string.`
  }
  if (!Number.isInteger(event.event_time)) return '"event_time" is a required integer (unix seconds).'
  if (!isObject(event.user_data)) return '"user_data" is a required object.'
  if (event.opt_out !== undefined && typeof event.opt_out !== 'boolean') return '"opt_out" must be a boolean.'
  const custom = event.custom_data
  if (custom === undefined) return undefined
  if (!isObject(custom)) return '"custom_data" must be an object.'
  for (const key of ['value', 'currency', 'order_id', 'opt_out_type']) {
    if (custom[key] !== undefined && typeof custom[key] !== 'string') return `"custom_data.${key}" must be a string.`
  }
  if (custom.num_items !== undefined && !Number.isInteger(custom.num_items)) return '"custom_data.num_items" must be an integer.'
  const contents = custom.contents ?? []
  if (!Array.isArray(contents) || contents.some((c) => !isObject(c) || (c.item_price !== undefined && typeof c.item_price !== 'string') || (c.quantity !== undefined && !Number.isInteger(c.quantity)))) {
    return '"custom_data.contents" must be objects with item_price a string and quantity an integer.'
  }
  return undefined
}

/** What Pinterest refuses per event (the rest of the request is still processed). */
function checkEvent(event: Record<string, unknown>, nowS: number): EventResult {
  const failed = (error_message: string): EventResult => ({ status: 'failed', error_message, warning_message: '' })
  const time = event.event_time as number
  if (time > nowS + FUTURE_SKEW_S) return failed(`Invalid event_timestamp parameter. Given timestamp is in the future. Current timestamp: ${Math.floor(nowS)}, Given event_timestamp: ${time}`)
  if (time < nowS - MAX_AGE_S) return failed(`Invalid event_timestamp parameter. Given timestamp is in the past. Current timestamp: ${Math.floor(nowS)}, Given event_timestamp: ${time}`)
  if (!EVENT_NAMES.has(event.event_name as string)) return failed(`Invalid event_name parameter: ${String(event.event_name)}`)
  if (!ACTION_SOURCES.has(event.action_source as string)) return failed(`Invalid action_source parameter: ${String(event.action_source)}`)
  const userData = event.user_data as Record<string, unknown>
  for (const key of HASHED_KEYS) {
    const value = userData[key]
    if (value !== undefined && (!Array.isArray(value) || value.length === 0 || !value.every(isSha256Hex))) {
      return failed(`Invalid user_data.${key} parameter: must be an array of SHA-256 hashes (64 lowercase hex characters)`)
    }
  }
  const hasPair = typeof userData.client_ip_address === 'string' && typeof userData.client_user_agent === 'string'
  if (userData.em === undefined && userData.hashed_maids === undefined && !hasPair) {
    return failed('user_data must contain at least one of em, hashed_maids, or the pair client_ip_address and client_user_agent')
  }
  const optOutType = (event.custom_data as Record<string, unknown> | undefined)?.opt_out_type
  if (typeof optOutType === 'string' && optOutType.trim() !== '' && optOutType.split(',').some((flag) => flag.trim() !== 'LDP')) {
    return failed(`Invalid opt_out_type parameter: ${optOutType}`)
  }
  return { status: 'processed', error_message: '', warning_message: '' }
}
