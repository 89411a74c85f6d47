/**
 * A fake Reddit Ads API serving the Conversions API v3 edge POST /api/v3/pixels/{pixel_id}/conversion_events.
 * It checks what Reddit documents it checks (v3 Direct Integration and error tables, the v2→v3 migration guide)
 * and answers with Reddit's bodies: `{ data: { message } }` on success, `{ error: { code, message, fields? } }` on
 * failure, the auth gateway's `{ success: false, error: { reason, explanation } }` for a bad token. Where Reddit is
 * lenient (it takes match keys unhashed) the fake is stricter: dcgate always sends 64-hex digests.
 */
import { REDDIT_API_VERSION } from '../../adapters/ads/reddit/version.ts'
import { bearer, isObject, isSha256Hex, parseJson } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from './server.ts'

export interface RedditBatch { pixelId: string, testId?: string, events: Record<string, any>[] }

export interface FakeReddit extends FakeServer {
  pixelId: string
  accessToken: string
  /** Every request Reddit processed, in order. */
  batches: RedditBatch[]
  /** Every processed event, in order, across batches. */
  readonly events: Record<string, any>[]
}

export interface FakeRedditOptions { pixelId?: string, accessToken?: string, now?: () => number }

const MAX_EVENTS = 1000
const MAX_AGE_MS = 168 * 3_600_000
const FUTURE_SKEW_MS = 5 * 60_000
const TRACKING_TYPES = new Set(['PAGE_VISIT', 'VIEW_CONTENT', 'SEARCH', 'ADD_TO_CART', 'ADD_TO_WISHLIST', 'PURCHASE', 'LEAD', 'SIGN_UP', 'CUSTOM'])
const ACTION_SOURCES = new Set(['WEBSITE', 'APP', 'PHYSICAL_STORE', 'OTHER'])
const DATA_KEYS = new Set(['events', 'test_id', 'partner'])
const EVENT_KEYS = new Set(['event_at', 'action_source', 'type', 'click_id', 'event_source_url', 'metadata', 'user'])
const HASHED_USER_KEYS = ['email', 'phone_number', 'external_id', 'ip_address', 'idfa', 'aaid']

const error = (code: number, message: string, fields?: { field: string, message: string }[]): FakeReply =>
  ({ status: code, body: { error: { code, message, ...(fields ? { fields } : {}) } } })

/** Reddit's error answers, to queue for failure scenarios. */
export const redditErrors = {
  missingToken: (): FakeReply => error(401, 'No bearer token provided'),
  invalidToken: (): FakeReply => ({ status: 401, body: { success: false, error: { reason: 'UNAUTHORIZED', explanation: 'This server could not verify that you are authorized to access the document you requested.' } } }),
  forbiddenPixel: (pixelId: string): FakeReply => error(403, `You're not authorized to post conversions to Pixel ID ${pixelId}.`),
  missingScope: (): FakeReply => error(403, 'Missing adsconversions scope to post conversions to Pixel.'),
  rateLimited: (): FakeReply => error(429, 'Too many requests/events within timeframe.'),
  userAgentRateLimited: (): FakeReply => error(429, 'Your user agent was automatically ratelimited.'),
  unavailable: (): FakeReply => error(500, 'The service is currently unavailable. No conversion events were processed.'),
  tooManyEvents: (): FakeReply => error(400, 'Bad Request'),
  invalidEvents: (fields: { field: string, message: string }[]): FakeReply =>
    error(400, `There were ${new Set(fields.map((f) => /events\[(\d+)\]/.exec(f.field)?.[1])).size} invalid conversion events. None were processed.`, fields),
}

export async function startFakeReddit(options: FakeRedditOptions = {}): Promise<FakeReddit> {
  const pixelId = options.pixelId ?? 'a2_fake1234abcd'
  const accessToken = options.accessToken ?? 'eyJhbGciOiJSUzI1NiIsImtpZCI6IkZha2VDb252ZXJzaW9uVG9rZW4ifQ.fake'
  const now = options.now ?? Date.now
  const batches: RedditBatch[] = []

  const server = await startFakeServer((request) => {
    const path = /^\/api\/([^/]+)\/pixels\/([^/]+)\/conversion_events$/.exec(request.path.split('?')[0]!)
    if (!path || path[1] !== REDDIT_API_VERSION || request.method !== 'POST') {
      return { status: 404, body: '404 page not found', headers: { 'content-type': 'text/plain; charset=utf-8' } }
    }
    const token = bearer(request)
    if (!token) return redditErrors.missingToken()
    if (token !== accessToken) return redditErrors.invalidToken()
    if (decodeURIComponent(path[2]!) !== pixelId) return redditErrors.forbiddenPixel(decodeURIComponent(path[2]!))
    const checked = checkBody(request, now())
    if ('error' in checked) return checked.error
    batches.push({ pixelId, ...checked })
    return { status: 200, body: { data: { message: `Successfully processed ${checked.events.length} conversion events.` } } }
  })
  return {
    ...server,
    pixelId,
    accessToken,
    batches,
    get events() {
      return batches.flatMap((batch) => batch.events)
    },
  }
}

// --- internal ---

function checkBody(request: RecordedRequest, nowMs: number): Omit<RedditBatch, 'pixelId'> | { error: FakeReply } {
  // JSON.parse never yields undefined: undefined means the body is not JSON.
  const body: any = parseJson(request.body)
  if (body === undefined) return { error: error(400, 'JSON error: invalid character in request body') }
  const data = body?.data
  const stray = Object.keys(body ?? {}).find((key) => key !== 'data') ?? Object.keys(isObject(data) ? data : {}).find((key) => !DATA_KEYS.has(key))
  if (stray) return { error: error(400, `JSON error "unknown field" on field "${stray}"`) }
  if (!isObject(data) || !Array.isArray(data.events) || data.events.length === 0) return { error: error(400, 'missing events') }
  if (data.events.length > MAX_EVENTS) return { error: redditErrors.tooManyEvents() }
  if (data.test_id !== undefined && (typeof data.test_id !== 'string' || !data.test_id)) return { error: error(400, 'JSON error unexpected type on field data test_id') }

  const fields: { field: string, message: string }[] = []
  for (const [index, event] of (data.events as unknown[]).entries()) {
    if (!isObject(event)) return { error: error(400, `JSON error unexpected type on field events[${index}]`) }
    const unknown = Object.keys(event).find((key) => !EVENT_KEYS.has(key))
    if (unknown) return { error: error(400, `JSON error "unknown field" on field "${unknown}"`) }
    if (event.action_source === undefined) return { error: error(400, 'missing action_source') }
    if (!ACTION_SOURCES.has(event.action_source)) return { error: error(400, `invalid action_source: ${String(event.action_source)}`) }
    for (const [field, message] of checkEvent(event, nowMs)) fields.push({ field: `$.data.events[${index}].${field}`, message })
  }
  if (fields.length > 0) return { error: redditErrors.invalidEvents(fields) }
  return { events: data.events, ...(data.test_id ? { testId: data.test_id } : {}) }
}

function checkEvent(event: Record<string, any>, nowMs: number): [string, string][] {
  const problems: [string, string][] = []
  const at = event.event_at
  if (!Number.isInteger(at)) problems.push(['event_at', 'event_at must be an integer: Unix epoch time in milliseconds'])
  else if (at < nowMs - MAX_AGE_MS) problems.push(['event_at', 'event_at timestamp must be less than 168h0m0s old'])
  else if (at > nowMs + FUTURE_SKEW_MS) problems.push(['event_at', 'event_at timestamp must not be in the future'])
  const type = event.type
  if (!isObject(type) || !TRACKING_TYPES.has(type.tracking_type)) problems.push(['type.tracking_type', `invalid tracking_type: ${String(type?.tracking_type)}`])
  else if (type.tracking_type === 'CUSTOM' && (typeof type.custom_event_name !== 'string' || !type.custom_event_name || type.custom_event_name.length > 64)) {
    problems.push(['type.custom_event_name', 'custom_event_name is required for CUSTOM events, at most 64 characters'])
  }
  const metadata = event.metadata ?? {}
  if (metadata.value !== undefined && typeof metadata.value !== 'number') problems.push(['metadata.value', 'value must be a number in the currency\'s base unit'])
  if (metadata.currency !== undefined && !/^[A-Z]{3}$/.test(metadata.currency)) problems.push(['metadata.currency', 'currency must be an ISO 4217 code'])
  if (metadata.item_count !== undefined && !Number.isInteger(metadata.item_count)) problems.push(['metadata.item_count', 'item_count must be an integer'])
  if (metadata.conversion_id !== undefined && typeof metadata.conversion_id !== 'string') problems.push(['metadata.conversion_id', 'conversion_id must be a string'])
  const user = event.user ?? {}
  for (const key of HASHED_USER_KEYS) {
    if (user[key] !== undefined && !isSha256Hex(String(user[key]))) problems.push([`user.${key}`, `${key} must be SHA-256 hashed: 64 lowercase hex characters`])
  }
  const dpo = user.data_processing_options
  if (dpo !== undefined && (!Array.isArray(dpo.modes) || dpo.modes.some((mode: unknown) => mode !== 'LDU'))) problems.push(['user.data_processing_options.modes', 'modes may only hold "LDU"'])
  // Reddit's example: { modes: ["LDU"], country: "US", region: "US-CA" } (ISO 3166-1 alpha-2, ISO 3166-2).
  if (dpo?.country !== undefined && !/^[A-Z]{2}$/.test(dpo.country)) problems.push(['user.data_processing_options.country', 'country must be an ISO 3166-1 alpha-2 code, e.g. "US"'])
  if (dpo?.region !== undefined && !/^[A-Z]{2}-[A-Z0-9]{1,3}$/.test(dpo.region)) problems.push(['user.data_processing_options.region', 'region must be an ISO 3166-2 code, e.g. "US-CA"'])
  // The v3 migration guide: event_source_url is provided for WEBSITE events only.
  if (event.event_source_url !== undefined && event.action_source !== 'WEBSITE') problems.push(['event_source_url', 'event_source_url may only be sent with action_source WEBSITE'])
  if (!event.click_id && !HASHED_USER_KEYS.some((key) => user[key]) && !user.uuid) problems.push(['user', 'at least one match key is required'])
  return problems
}
