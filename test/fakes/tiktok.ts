/**
 * A fake TikTok API for Business serving Events API 2.0: POST /open_api/{version}/event/track/. It checks what the
 * real endpoint checks (research: ad-platforms-meta-google-tiktok-linkedin.md §3.12, TikTok's Events API 2.0
 * parameter reference) and answers like TikTok: HTTP 200 with the `{ code, message, request_id, data }` envelope,
 * `code` 0 on success and a non-zero code on failure. Queue tiktokErrors.* replies to inject other answers.
 *
 * Codes are TikTok's (40001 permission, 40002 parameters, 40100 throttling, 40104/40105 token, 5xxxx system);
 * the `message` texts other than research §3.9's event_id example are modelled on TikTok's wording. TikTok refuses a
 * request as a whole; the fake names the first invalid event (`data[1]: …`) in the 40002 message, which is our
 * model, not a documented format (README "Partial failures"). A web event without `page.url` is refused: the
 * parameter reference marks `page` required for web events.
 *
 * Event sources (reference read 2026-11-28, README "Event sources"): `event_source_id` must be the pixel code for
 * `web`, the Offline Event Set id for `offline`, the CRM Event Set id for `crm` (else 40001). Offline and CRM events
 * need `event_id`; CRM events need `lead.lead_id`. A `user` key, `page` or `limited_data_use` that the reference
 * gives only to other sources is refused (40002): our strict reading of "only web events may specify this field".
 */
import { isTikTokCurrency } from '../../adapters/ads/tiktok/currencies.ts'
import { TIKTOK_API_VERSION } from '../../adapters/ads/tiktok/version.ts'
import { isObject, isSha256Hex, jsonBody } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer } from './server.ts'

export interface TikTokBatch {
  pixelCode: string
  eventSource: 'web' | 'app' | 'offline' | 'crm'
  eventSourceId: string
  testEventCode?: string
  data: Record<string, unknown>[]
}

export interface FakeTikTok extends FakeServer {
  pixelCode: string
  offlineEventSetId: string
  crmEventSetId: string
  accessToken: string
  /** Every request TikTok accepted, in order. */
  batches: TikTokBatch[]
  /** Every accepted event, in order, across batches. */
  readonly events: Record<string, unknown>[]
}

export interface FakeTikTokOptions {
  pixelCode?: string
  accessToken?: string
  version?: string
  /** The fake's clock, in ms, for the event-time checks. */
  now?: () => number
}

const EVENT_SOURCES = new Set(['web', 'app', 'offline', 'crm'])
const HASHED_USER_KEYS = ['email', 'phone', 'external_id']
const PLAIN_USER_KEYS = ['ttclid', 'ttp', 'ip', 'user_agent', 'locale']
/** The `user` keys each source may carry, per the reference ("only web events…", "web and CRM events…"). */
const USER_KEYS_FOR: Record<string, readonly string[]> = {
  web: ['ttclid', 'email', 'phone', 'external_id', 'ttp', 'ip', 'user_agent', 'locale'],
  offline: ['email', 'phone'],
  crm: ['email', 'phone', 'external_id'],
}
const DAY_S = 86_400
/** How far in the future event_time may be (clock skew). */
const FUTURE_SKEW_S = 10 * 60
/** The window the fake enforces, matching the adapter's declared maxEventAgeDays. */
const MAX_AGE_DAYS = 7

let requests = 0
const requestId = () => `2026030210000${String(++requests).padStart(5, '0')}0EF6F5D96D179820`

/** TikTok's envelope, as the API sends it (HTTP 200 unless given). */
export function tiktokEnvelope(code: number, message: string, status = 200): FakeReply {
  return { status, body: { code, message, request_id: requestId(), data: {} } }
}

/** TikTok's answers for failures, to queue or to build contract replies from. */
export const tiktokErrors = {
  invalidToken: () => tiktokEnvelope(40105, 'Access token is incorrect or has been revoked.'),
  missingToken: () => tiktokEnvelope(40104, 'Access token is empty.'),
  throttled: () => tiktokEnvelope(40100, 'Too many requests. Please retry in some time.'),
  systemError: (code = 50000) => tiktokEnvelope(code, 'System error, please try again later.'),
  noPermission: (pixelCode: string) => tiktokEnvelope(40001, `No permission to operate pixel code: ${pixelCode}.`),
  invalidParameter: (message: string) => tiktokEnvelope(40002, message),
}

export async function startFakeTikTok(options: FakeTikTokOptions = {}): Promise<FakeTikTok> {
  const pixelCode = options.pixelCode ?? 'CFAKEPIXEL0123456789'
  const offlineEventSetId = '7301234567890123456'
  const crmEventSetId = '7309876543210987654'
  const sourceIds: Record<string, string> = { web: pixelCode, offline: offlineEventSetId, crm: crmEventSetId }
  const accessToken = options.accessToken ?? 'fake0events0api0token0123456789abcdef0123'
  const version = options.version ?? TIKTOK_API_VERSION
  const now = options.now ?? Date.now
  const batches: TikTokBatch[] = []

  const server = await startFakeServer((request) => {
    const path = new URL(request.path, 'http://fake.invalid').pathname
    const route = /^\/open_api\/(v\d+\.\d+)\/event\/track\/?$/.exec(path)
    if (!route || route[1] !== version || request.method !== 'POST') {
      return { status: 404, body: '404 page not found', headers: { 'content-type': 'text/plain; charset=utf-8' } }
    }
    const token = request.headers['access-token']
    if (!token) return tiktokErrors.missingToken()
    if (token !== accessToken) return tiktokErrors.invalidToken()
    const body = jsonBody(request)
    if (!body) return tiktokErrors.invalidParameter('The request body must be a JSON object.')
    // Permission first: an event source id the token may not use is refused whatever the events.
    const eventSource = body.event_source as TikTokBatch['eventSource']
    if (body.event_source_id !== undefined && body.event_source_id !== sourceIds[eventSource]) return tiktokErrors.noPermission(String(body.event_source_id))
    const problem = checkBody(body, now() / 1000)
    if (problem) return tiktokErrors.invalidParameter(problem)
    const testEventCode = body.test_event_code as string | undefined
    batches.push({ pixelCode, eventSource, eventSourceId: String(body.event_source_id), ...(testEventCode ? { testEventCode } : {}), data: body.data as Record<string, unknown>[] })
    return { status: 200, body: { code: 0, message: 'OK', request_id: requestId(), data: {} } }
  })
  return {
    ...server,
    pixelCode,
    offlineEventSetId,
    crmEventSetId,
    accessToken,
    batches,
    get events() {
      return batches.flatMap((batch) => batch.data)
    },
  }
}

// --- internal ---

function checkBody(body: Record<string, unknown>, nowS: number): string | undefined {
  if (typeof body.event_source !== 'string' || !EVENT_SOURCES.has(body.event_source)) return 'Invalid value for event_source: must be one of web, app, offline, crm.'
  if (typeof body.event_source_id !== 'string' || !body.event_source_id) return 'event_source_id is required.'
  if (body.test_event_code !== undefined && typeof body.test_event_code !== 'string') return 'Invalid value for test_event_code: not a valid string.'
  const data = body.data
  if (!Array.isArray(data) || data.length === 0) return 'data is required and must be a non-empty array.'
  if (data.length > 1000) return `Too many events in data: at most 1000 per request, got ${data.length}.`
  for (const [index, event] of data.entries()) {
    const problem = checkEvent(event, nowS) ?? checkForSource(event as Record<string, unknown>, body.event_source)
    if (problem) return `data[${index}]: ${problem}`
  }
  return undefined
}

function checkEvent(event: unknown, nowS: number): string | undefined {
  if (!isObject(event)) return 'each event must be an object.'
  if (typeof event.event !== 'string' || !event.event) return 'event is required.'
  const time = event.event_time
  if (typeof time !== 'number' || !Number.isInteger(time)) return 'Invalid value for event_time: must be a unix timestamp in seconds.'
  if (time > nowS + FUTURE_SKEW_S) return 'Invalid value for event_time: the time is in the future (send seconds, not milliseconds).'
  if (time < nowS - MAX_AGE_DAYS * DAY_S) return `Invalid value for event_time: the event is more than ${MAX_AGE_DAYS} days old.`
  if (event.event_id !== undefined && typeof event.event_id !== 'string') return 'Invalid value for event_id: not a valid string.'
  if (event.limited_data_use !== undefined && typeof event.limited_data_use !== 'boolean') return 'Invalid value for limited_data_use: must be a boolean.'
  if (event.page !== undefined && (!isObject(event.page) || (event.page.url !== undefined && typeof event.page.url !== 'string'))) return 'Invalid value for page.url: not a valid string.'
  return checkUser(event.user) ?? checkProperties(event.properties)
}

/**
 * What the reference asks of each source: `page.url` on web events; `event_id` on offline and CRM events;
 * `lead.lead_id` on CRM events; `page`, `limited_data_use` and some `user` keys on the sources that take them only.
 */
function checkForSource(event: Record<string, unknown>, source: string): string | undefined {
  const page = event.page
  if (source === 'web') return isObject(page) && typeof page.url === 'string' && page.url ? undefined : 'page.url is required for web events.'
  if (source === 'app') return undefined
  if (typeof event.event_id !== 'string' || !event.event_id) return `event_id is required for ${source} events.`
  if (page !== undefined) return `page is only for web events, not ${source} events.`
  if (event.limited_data_use !== undefined) return `limited_data_use is only for web and app events, not ${source} events.`
  const user = isObject(event.user) ? event.user : {}
  const extra = Object.keys(user).find((key) => !USER_KEYS_FOR[source]!.includes(key))
  if (extra) return `user.${extra} is not supported for ${source} events.`
  if (source === 'crm' && !(isObject(event.lead) && typeof event.lead.lead_id === 'string' && event.lead.lead_id)) return 'lead.lead_id is required for crm events.'
  return undefined
}

function checkUser(user: unknown): string | undefined {
  if (user === undefined) return undefined
  if (!isObject(user)) return 'user must be an object.'
  for (const key of HASHED_USER_KEYS) {
    const value = user[key]
    if (value === undefined) continue
    const values = Array.isArray(value) ? value : [value]
    if (values.length === 0 || !values.every(isSha256Hex)) {
      return `Invalid value for user.${key}: must be hashed with SHA-256 (64 lowercase hex characters).`
    }
  }
  for (const key of PLAIN_USER_KEYS) {
    if (user[key] !== undefined && typeof user[key] !== 'string') return `Invalid value for user.${key}: not a valid string.`
  }
  return undefined
}

function checkProperties(properties: unknown): string | undefined {
  if (properties === undefined) return undefined
  if (!isObject(properties)) return 'properties must be an object.'
  if (properties.value !== undefined) {
    if (typeof properties.value !== 'number') return 'Invalid value for properties.value: must be a number.'
    if (typeof properties.currency !== 'string' || !isTikTokCurrency(properties.currency)) return 'Invalid value for properties.currency: must be a supported ISO 4217 code when value is set.'
  }
  if (properties.content_type !== undefined && !['product', 'product_group'].includes(String(properties.content_type))) return 'Invalid value for properties.content_type: must be product or product_group.'
  if (properties.contents !== undefined) {
    if (!Array.isArray(properties.contents)) return 'properties.contents must be an array.'
    for (const content of properties.contents) {
      if (!isObject(content) || typeof content.content_id !== 'string') return 'Invalid value for properties.contents[].content_id: not a valid string.'
      if (content.price !== undefined && typeof content.price !== 'number') return 'Invalid value for properties.contents[].price: must be a number.'
      if (content.quantity !== undefined && !Number.isInteger(content.quantity)) return 'Invalid value for properties.contents[].quantity: must be an integer.'
    }
  }
  return undefined
}
