/**
 * A fake Microsoft UET Conversions API: POST /v1/{tagId}/events with `Authorization: Bearer <token>`. It checks
 * what the real endpoint checks (research: ad-platforms-microsoft-reddit-pinterest-x-crm-webhooks.md §A1.1, and
 * Microsoft's CAPI guide) and answers with its bodies: `{ eventsReceived }` on success, `{ error: { code: "ValidationError",
 * message, details[] } }` per event (200 with continueOnValidationError, else 400), and 401 "Unauthorized".
 * Queue microsoftErrors.* replies to inject throttling or server failures.
 */
import { MICROSOFT_ADS_API_VERSION } from '../../adapters/ads/microsoft-ads/version.ts'
import { bearer, isObject, isSha256Hex, jsonBody, reply } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer } from './server.ts'

export interface UetBatch {
  tagId: string
  continueOnValidationError: boolean
  dataProvider?: string
  /** The events Microsoft processed, with fields dropped by a warning removed. */
  data: Record<string, unknown>[]
}

export interface FakeMicrosoftAds extends FakeServer {
  tagId: string
  apiToken: string
  /** Every request Microsoft processed at least one event of, in order. */
  batches: UetBatch[]
  /** Every processed event, in order, across batches. */
  readonly events: Record<string, unknown>[]
}

export interface FakeMicrosoftAdsOptions {
  tagId?: string
  apiToken?: string
  /** The fake's clock, in ms, for the 7-day window. */
  now?: () => number
}

export interface UetDetail {
  index?: number
  propertyName: string
  attemptedValue?: unknown
  errorMessage: string
  errorCode: string
  isWarning: boolean
}

const VALIDATION_MESSAGE = 'One or multiple parameters did not pass validation checks, see details.'

/**
 * Microsoft's answers. 401 and ValidationError are the documented bodies. 429 and 5xx are not documented; these
 * use the same `{ error: { code, message } }` envelope, with the fake's own words.
 */
export const microsoftErrors = {
  unauthorized: (): FakeReply => ({ status: 401, body: { error: { code: 'Unauthorized', message: 'You are not authorized to access this resource.' } } }),
  validation: (details: UetDetail[], processed?: number): FakeReply => ({
    status: processed ? 200 : 400,
    body: { ...(processed ? { eventsReceived: processed } : {}), error: { code: 'ValidationError', message: VALIDATION_MESSAGE, details: details.slice(0, 10) } },
  }),
  throttled: (retryAfterSeconds?: number): FakeReply => reply(
    429,
    { error: { code: 'TooManyRequests', message: 'Rate limit exceeded. Retry the request later.' } },
    retryAfterSeconds === undefined ? undefined : { 'Retry-After': String(retryAfterSeconds) },
  ),
  serverError: (): FakeReply => ({ status: 500, body: { error: { code: 'InternalServerError', message: 'An internal error occurred. Retry the request with the same eventId.' } } }),
}

const MAX_EVENTS = 1000
const SEVEN_DAYS_S = 7 * 86_400
/** How far in the future the fake lets eventTime be (clock skew). */
const FUTURE_SKEW_S = 10 * 60
/** Microsoft: msclkid "must be a valid UUID"; the 32-hex form Microsoft appends to URLs parses as one. */
const UUID = /^(?:[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i
const IDENTIFIERS = ['anonymousId', 'externalId', 'em', 'ph', 'msclkid', 'idfa', 'gaid']
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'))

export async function startFakeMicrosoftAds(options: FakeMicrosoftAdsOptions = {}): Promise<FakeMicrosoftAds> {
  const tagId = options.tagId ?? '187004321'
  const apiToken = options.apiToken ?? 'uet-capi-fake-token-7f3a9c'
  const now = options.now ?? Date.now
  const batches: UetBatch[] = []

  const server = await startFakeServer((request) => {
    const path = /^\/(v\d+)\/([^/?]+)\/events\/?(?:\?.*)?$/.exec(request.path)
    if (!path || path[1] !== MICROSOFT_ADS_API_VERSION) return { status: 404, body: '' }
    if (request.method !== 'POST') return { status: 405, body: '' }
    if (bearer(request) !== apiToken || path[2] !== tagId) return microsoftErrors.unauthorized()
    const body = jsonBody(request)
    if (!body) return microsoftErrors.validation([detail('', request.body, 'The request body must be a JSON object.', 'InvalidJson')])
    const data = body.data
    if (!Array.isArray(data) || data.length === 0) return microsoftErrors.validation([detail('data', data, "'data' must not be empty.", 'Empty')])
    if (data.length > MAX_EVENTS) return microsoftErrors.validation([detail('data', data.length, `'data' must not contain more than ${MAX_EVENTS} events.`, 'MaxItems')])

    const continueOn = body.continueOnValidationError === true
    const details: UetDetail[] = []
    const accepted: Record<string, unknown>[] = []
    data.forEach((event: unknown, index) => {
      const own = checkEvent(event, index, now() / 1000)
      details.push(...own.details)
      if (own.event) accepted.push(own.event)
    })
    const failed = details.some((d) => !d.isWarning)
    if ((failed && !continueOn) || accepted.length === 0) return microsoftErrors.validation(details)
    batches.push({ tagId, continueOnValidationError: continueOn, ...(typeof body.dataProvider === 'string' ? { dataProvider: body.dataProvider } : {}), data: accepted })
    if (details.length > 0) return microsoftErrors.validation(details, accepted.length)
    return { status: 200, body: { eventsReceived: accepted.length } }
  })
  return {
    ...server,
    tagId,
    apiToken,
    batches,
    get events() {
      return batches.flatMap((batch) => batch.data)
    },
  }
}

// --- internal ---

/** One event's errors and warnings; the event as processed (warned fields dropped) unless it has an error. */
function checkEvent(event: unknown, index: number, nowS: number): { details: UetDetail[], event?: Record<string, unknown> } {
  const at = (field: string) => `data[${index}].${field}`
  const problems: UetDetail[] = []
  const fail = (field: string, value: unknown, message: string, code: string) => problems.push(detail(at(field), value, message, code, index))
  if (!isObject(event)) {
    fail('', event, 'Each event must be an object.', 'InvalidType')
    return { details: problems }
  }
  if (event.eventType !== 'pageLoad' && event.eventType !== 'custom') fail('eventType', event.eventType, "'eventType' must be one of the following: pageLoad, custom.", 'InvalidEnumValue')
  const time = event.eventTime
  if (time === undefined || time === null) fail('eventTime', time, "'eventTime' must not be empty.", 'Empty')
  else if (typeof time !== 'number' || !Number.isInteger(time)) fail('eventTime', time, "'eventTime' must be a UNIX timestamp in seconds.", 'InvalidEventTime')
  else if (time > nowS + FUTURE_SKEW_S) fail('eventTime', time, "'eventTime' must not be in the future.", 'InvalidEventTime')
  else if (time < nowS - SEVEN_DAYS_S) fail('eventTime', time, "'eventTime' must be within last 7 days.", 'InvalidEventTime')
  if (event.eventType === 'pageLoad' && !event.eventSourceUrl) fail('eventSourceUrl', event.eventSourceUrl, "'eventSourceUrl' must not be empty.", 'Empty')
  for (const field of ['eventSourceUrl', 'referrerUrl']) {
    const url = event[field]
    if (url !== undefined && (typeof url !== 'string' || !/^https?:\/\/[^\s/]+/i.test(url))) fail(field, url, `'${field}' must be a valid URL.`, 'InvalidUrl')
  }
  if (event.adStorageConsent !== undefined && event.adStorageConsent !== 'G' && event.adStorageConsent !== 'D') {
    fail('adStorageConsent', event.adStorageConsent, "'adStorageConsent' must be one of the following: G, D.", 'InvalidEnumValue')
  }
  const userData = checkUserData(event.userData, index, problems)
  checkCustomData(event.customData, index, problems)
  if (problems.some((d) => !d.isWarning)) return { details: problems }
  return { details: problems, event: { ...event, userData } }
}

/** Hashes that are not SHA-256 are dropped with a warning; at least one identifier must remain. */
function checkUserData(userData: unknown, index: number, problems: UetDetail[]): Record<string, unknown> {
  const at = `data[${index}].userData`
  if (!isObject(userData)) {
    problems.push(detail(at, userData, "'userData' must not be empty.", 'Empty', index))
    return {}
  }
  const kept = { ...userData }
  for (const field of ['em', 'ph']) {
    const value = kept[field]
    if (value === undefined || isSha256Hex(value)) continue
    problems.push({ ...detail(`${at}.${field}`, value, `'${field}' must be a valid SHA256 string.`, 'InvalidSha256', index), isWarning: true })
    delete kept[field]
  }
  if (kept.msclkid !== undefined && (typeof kept.msclkid !== 'string' || !UUID.test(kept.msclkid))) {
    problems.push(detail(`${at}.msclkid`, kept.msclkid, "'msclkid' must be a valid UUID.", 'InvalidUuid', index))
  }
  if (!IDENTIFIERS.some((key) => typeof kept[key] === 'string' && kept[key] !== '')) {
    problems.push(detail(at, userData, `'userData' must contain at least one of: ${IDENTIFIERS.join(', ')}.`, 'Empty', index))
  }
  return kept
}

function checkCustomData(customData: unknown, index: number, problems: UetDetail[]): void {
  if (customData === undefined) return
  const at = `data[${index}].customData`
  if (!isObject(customData)) {
    problems.push(detail(at, customData, "'customData' must be an object.", 'InvalidType', index))
    return
  }
  for (const field of ['value', 'eventValue', 'ecommTotalValue']) {
    if (customData[field] !== undefined && typeof customData[field] !== 'number') problems.push(detail(`${at}.${field}`, customData[field], `'${field}' must be a number.`, 'InvalidType', index))
  }
  const currency = customData.currency
  if (currency !== undefined && (typeof currency !== 'string' || !CURRENCIES.has(currency))) {
    problems.push(detail(`${at}.currency`, currency, "'currency' must be a 3-letter ISO 4217 code.", 'InvalidEnumValue', index))
  }
  if (customData.items !== undefined && !Array.isArray(customData.items)) problems.push(detail(`${at}.items`, customData.items, "'items' must be an array.", 'InvalidType', index))
}

function detail(propertyName: string, attemptedValue: unknown, errorMessage: string, errorCode: string, index?: number): UetDetail {
  return { ...(index === undefined ? {} : { index }), propertyName, attemptedValue, errorMessage, errorCode, isWarning: false }
}
