/**
 * A fake Meta Graph API serving the Conversions API edge POST /{version}/{pixelId}/events. It checks what the
 * real endpoint checks (research: ad-platforms-meta-google-tiktok-linkedin.md §1.13) and answers with Graph's
 * success and error bodies. Queue metaErrors.* replies to inject throttling, token or server failures.
 */
import { META_API_VERSION } from '../../adapters/ads/meta/version.ts'
import { bearer, isObject, isSha256Hex, jsonBody, parseJson, reply } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from './server.ts'

export interface MetaBatch {
  pixelId: string
  testEventCode?: string
  data: Record<string, unknown>[]
}

export interface FakeMeta extends FakeServer {
  pixelId: string
  accessToken: string
  /** Every batch Meta accepted, in order. */
  batches: MetaBatch[]
  /** Every accepted server event, in order, across batches. */
  readonly events: Record<string, unknown>[]
  /** From now on the configured token is refused as expired (OAuthException 190, subcode 463), as Meta refuses a revoked or expired one. */
  revokeToken: () => void
  /** The token works again (a new one was issued under the same value). */
  restoreToken: () => void
}

export interface FakeMetaOptions {
  pixelId?: string
  accessToken?: string
  version?: string
  /** The fake's clock, in ms, for the 7-day window. */
  now?: () => number
}

const ACTION_SOURCES = new Set(['email', 'website', 'app', 'phone_call', 'chat', 'physical_store', 'system_generated', 'business_messaging', 'other'])
const HASHED_KEYS = ['em', 'ph', 'fn', 'ln', 'ge', 'db', 'ct', 'st', 'zp', 'country']
const CUSTOMER_KEYS = [...HASHED_KEYS, 'external_id', 'client_ip_address', 'client_user_agent', 'fbc', 'fbp', 'subscription_id', 'fb_login_id', 'lead_id', 'anon_id', 'madid', 'page_id', 'page_scoped_user_id', 'ctwa_clid', 'ig_account_id', 'ig_sid']
const FBC = /^fb\.\d\.\d{13}\.[\w.-]+$/
const FBP = /^fb\.\d\.\d{13}\.[\w.-]+$/
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'))
const DAY_S = 86_400
/** How far in the future the fake lets event_time be (clock skew). */
const FUTURE_SKEW_S = 10 * 60

let traces = 0
const fbtraceId = () => `AFake${String(++traces).padStart(6, '0')}Trace`

/** Graph error bodies, as Meta sends them. */
export const metaErrors = {
  /**
   * A token that was valid and no longer is: Graph's error handling guide lists code 190 ("Access token has expired")
   * with subcode 463 (expired); the message names when the session ended.
   */
  expiredToken: (expiredAt = new Date()): FakeReply => graphError(401, { message: `Error validating access token: Session has expired on ${expiredAt.toUTCString()}. The current time is ${new Date().toUTCString()}.`, type: 'OAuthException', code: 190, error_subcode: 463 }, { 'WWW-Authenticate': 'OAuth "Facebook Platform" "invalid_token" "Error validating access token: Session has expired"' }),
  invalidToken: (): FakeReply => graphError(401, { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code: 190 }, { 'WWW-Authenticate': 'OAuth "Facebook Platform" "invalid_token" "Invalid OAuth access token - Cannot parse access token"' }),
  missingToken: (): FakeReply => graphError(400, { message: 'An access token is required to request this resource.', type: 'OAuthException', code: 104 }),
  invalidParameter: (title: string, userMessage: string, subcode?: number): FakeReply => graphError(400, { message: 'Invalid parameter', type: 'OAuthException', code: 100, ...(subcode ? { error_subcode: subcode } : {}), is_transient: false, error_user_title: title, error_user_msg: userMessage }),
  throttled: (code: 4 | 17 | 32 | 341 | 613 = 4): FakeReply => graphError(code === 4 ? 403 : 400, { message: THROTTLE_MESSAGES[code], type: 'OAuthException', code, is_transient: true }),
  transient: (): FakeReply => graphError(500, { message: 'An unexpected error has occurred. Please retry your request later.', type: 'OAuthException', code: 2, is_transient: true }),
  /** A Business Use Case rate limit, as Meta answers it for a system user's token (HTTP 400, code 80000–80014). */
  businessUseCaseLimit: (code = 80004): FakeReply => graphError(400, { message: `(#${code}) There have been too many calls to this ad-account. Wait a bit and try again.`, type: 'OAuthException', code, error_subcode: 2446079, is_transient: true }),
  unknownObject: (id: string): FakeReply => graphError(400, { message: `Unsupported post request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`, type: 'GraphMethodException', code: 100, error_subcode: 33 }),
}

const THROTTLE_MESSAGES = {
  4: '(#4) Application request limit reached',
  17: '(#17) User request limit reached',
  32: '(#32) Page request limit reached',
  341: '(#341) Application limit reached',
  613: '(#613) Calls to this api have exceeded the rate limit.',
} as const

export async function startFakeMeta(options: FakeMetaOptions = {}): Promise<FakeMeta> {
  const pixelId = options.pixelId ?? '1234567890123456'
  const accessToken = options.accessToken ?? 'EAAFakeSystemUserToken0123456789'
  const version = options.version ?? META_API_VERSION
  const now = options.now ?? Date.now
  const batches: MetaBatch[] = []
  let revokedAt: Date | undefined

  const server = await startFakeServer((request) => {
    const url = new URL(request.path, 'http://fake.invalid')
    const node = /^\/(v\d+\.\d+)\/([^/]+)\/?$/.exec(url.pathname)
    if (node && node[1] === version && request.method === 'GET') return readPixel(node[2]!, bearer(request) ?? url.searchParams.get('access_token'), url.searchParams.get('fields'))
    const path = /^\/(v\d+\.\d+)\/([^/]+)\/events\/?$/.exec(url.pathname)
    if (!path || path[1] !== version) return graphError(400, { message: `Unknown path components: ${url.pathname}`, type: 'OAuthException', code: 2500 })
    const params = readParams(request, url)
    const token = bearer(request) ?? params.get('access_token')
    if (!token) return metaErrors.missingToken()
    if (token !== accessToken) return metaErrors.invalidToken()
    if (revokedAt) return metaErrors.expiredToken(revokedAt)
    if (request.method !== 'POST' || path[2] !== pixelId) return metaErrors.unknownObject(path[2]!)
    const checked = checkBatch(params, now())
    if ('error' in checked) return checked.error
    batches.push({ pixelId, ...checked })
    return { status: 200, body: { events_received: checked.data.length, messages: [], fbtrace_id: fbtraceId() } }
  })
  /** GET /{ads-pixel-id}: the Ads Pixel node, the fields asked for (id by default), as Graph reads any node. */
  function readPixel(id: string, token: string | null, fields: string | null): FakeReply {
    if (!token) return metaErrors.missingToken()
    if (token !== accessToken) return metaErrors.invalidToken()
    if (id !== pixelId) return graphError(400, { message: `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`, type: 'GraphMethodException', code: 100, error_subcode: 33 })
    const node: Record<string, unknown> = { id: pixelId, name: 'Fake Shop Pixel' }
    const wanted = (fields ?? 'id').split(',').map((f) => f.trim())
    return { status: 200, body: Object.fromEntries(Object.entries(node).filter(([key]) => wanted.includes(key) || key === 'id')) }
  }

  return {
    ...server,
    pixelId,
    accessToken,
    batches,
    get events() {
      return batches.flatMap((batch) => batch.data)
    },
    revokeToken: () => { revokedAt = new Date() },
    restoreToken: () => { revokedAt = undefined },
  }
}

// --- internal ---

function graphError(status: number, error: Record<string, unknown>, headers?: Record<string, string>): FakeReply {
  return reply(status, { error: { ...error, fbtrace_id: fbtraceId() } }, headers)
}

/** Query parameters, then the body's: JSON, or a form whose `data` is a JSON string (as Meta's curl examples send). */
function readParams(request: RecordedRequest, url: URL): Map<string, unknown> {
  const params = new Map<string, unknown>(url.searchParams)
  const type = String(request.headers['content-type'] ?? '')
  if (type.includes('application/json')) {
    for (const [key, value] of Object.entries(jsonBody(request) ?? {})) params.set(key, value)
  }
  else if (type.includes('application/x-www-form-urlencoded')) {
    for (const [key, value] of new URLSearchParams(request.body)) params.set(key, key === 'data' ? parseJson(value) : value)
  }
  return params
}

function checkBatch(params: Map<string, unknown>, nowMs: number): Omit<MetaBatch, 'pixelId'> | { error: FakeReply } {
  const data = params.get('data')
  const testEventCode = params.get('test_event_code')
  if (!Array.isArray(data) || data.length === 0) return invalid('Missing Events', 'The data parameter must be a non-empty array of server events.')
  if (data.length > 1000) return invalid('Too Many Events', `A request carries at most 1000 events; this one has ${data.length}.`)
  if (testEventCode !== undefined && typeof testEventCode !== 'string') return invalid('Invalid Test Event Code', 'test_event_code must be a string.')
  for (const [index, event] of data.entries()) {
    const problem = checkEvent(event, nowMs / 1000)
    if (problem) return { error: metaErrors.invalidParameter(problem.title, `data[${index}]: ${problem.message}`, problem.subcode) }
  }
  return { data: data as Record<string, unknown>[], ...(testEventCode ? { testEventCode } : {}) }
}

interface Problem { title: string, message: string, subcode?: number }

function checkEvent(event: unknown, nowS: number): Problem | undefined {
  if (!isObject(event)) return { title: 'Invalid Event', message: 'each server event must be an object' }
  if (typeof event.event_name !== 'string' || !event.event_name) return { title: 'Missing Event Name', message: 'event_name is required' }
  const time = event.event_time
  if (typeof time !== 'number' || !Number.isInteger(time)) return { title: 'Invalid Event Time', message: 'event_time must be an integer unix timestamp in seconds' }
  if (time > nowS + FUTURE_SKEW_S) return { title: 'Event Timestamp In The Future', message: 'event_time is in the future; send unix seconds, not milliseconds' }
  const maxAgeDays = event.action_source === 'physical_store' ? 62 : 7
  if (time < nowS - maxAgeDays * DAY_S) return { title: 'Event Timestamp Too Old', message: `event_time is more than ${maxAgeDays} days in the past`, subcode: 2804003 }
  if (typeof event.action_source !== 'string' || !ACTION_SOURCES.has(event.action_source)) return { title: 'Invalid Action Source', message: `action_source must be one of ${[...ACTION_SOURCES].join(', ')}` }
  return checkUserData(event.user_data) ?? checkWebsite(event) ?? checkCustomData(event.custom_data) ?? checkConsent(event)
}

/** Meta: website events require client_user_agent, action_source and event_source_url. */
function checkWebsite(event: Record<string, unknown>): Problem | undefined {
  if (event.action_source !== 'website') return undefined
  const userData = event.user_data as Record<string, unknown>
  for (const [key, value] of [['event_source_url', event.event_source_url], ['user_data.client_user_agent', userData.client_user_agent]] as const) {
    if (typeof value !== 'string' || !value) return { title: 'Missing Website Event Parameter', message: `${key} is required when action_source is website` }
  }
  return undefined
}

function checkUserData(userData: unknown): Problem | undefined {
  if (!isObject(userData)) return { title: 'Missing User Data', message: 'user_data is required' }
  if (!CUSTOMER_KEYS.some((key) => userData[key] !== undefined)) return { title: 'Missing Customer Information', message: 'user_data needs at least one customer information parameter' }
  for (const key of HASHED_KEYS) {
    const value = userData[key]
    if (value === undefined) continue
    const values = Array.isArray(value) ? value : [value]
    if (values.length === 0 || !values.every(isSha256Hex)) {
      return { title: 'Unhashed Customer Information', message: `user_data.${key} must be SHA-256 hashed: 64 lowercase hex characters` }
    }
  }
  if (userData.fbc !== undefined && (typeof userData.fbc !== 'string' || !FBC.test(userData.fbc))) return { title: 'Invalid fbc', message: 'user_data.fbc must look like fb.1.<creation time in ms>.<fbclid>' }
  if (userData.fbp !== undefined && (typeof userData.fbp !== 'string' || !FBP.test(userData.fbp))) return { title: 'Invalid fbp', message: 'user_data.fbp must look like fb.1.<creation time in ms>.<random number>' }
  return undefined
}

function checkCustomData(customData: unknown): Problem | undefined {
  if (customData === undefined) return undefined
  if (!isObject(customData)) return { title: 'Invalid Custom Data', message: 'custom_data must be an object' }
  if (customData.value === undefined) return undefined
  if (typeof customData.value !== 'number') return { title: 'Invalid Value', message: 'custom_data.value must be a number' }
  const currency = customData.currency
  if (typeof currency !== 'string' || !CURRENCIES.has(currency.toUpperCase())) return { title: 'Invalid Currency', message: 'custom_data.currency must be an ISO 4217 code when value is set' }
  return undefined
}

function checkConsent(event: Record<string, unknown>): Problem | undefined {
  const options = event.data_processing_options
  if (options === undefined) return undefined
  if (!Array.isArray(options) || options.some((option) => option !== 'LDU')) return { title: 'Invalid Data Processing Options', message: 'data_processing_options may only hold "LDU"' }
  // Meta's accepted values: country 1 (United States) or 0, state 1000 (California) or 0; 0 asks Meta to geolocate.
  for (const [key, accepted] of [['data_processing_options_country', [0, 1]], ['data_processing_options_state', [0, 1000]]] as const) {
    const value = event[key]
    if (value !== undefined && !(accepted as readonly unknown[]).includes(value)) return { title: 'Invalid Data Processing Options', message: `${key} must be one of ${accepted.join(', ')}` }
  }
  return undefined
}

function invalid(title: string, message: string): { error: FakeReply } {
  return { error: metaErrors.invalidParameter(title, message) }
}
