/**
 * A fake Microsoft UET Conversions API: POST /v1/{tagId}/events with `Authorization: Bearer <token>`. It checks
 * what the real endpoint checks (research: ad-platforms-microsoft-reddit-pinterest-x-crm-webhooks.md §A1.1, and
 * Microsoft's CAPI guide, read 2026-11-28: no age limit on eventTime, `anonymousId` taken in any format) and answers
 * with its bodies: `{ eventsReceived }` on success, `{ error: { code: "ValidationError",
 * message, details[] } }` per event (200 with continueOnValidationError, else 400), and 401 "Unauthorized".
 * Queue microsoftErrors.* replies to inject throttling or server failures.
 *
 * Refunds: the Microsoft identity platform's token endpoint (`POST /common/oauth2/v2.0/token`, refresh-token grant,
 * scope msads.manage) and the Campaign Management API v13 REST operation `POST /CampaignManagement/v13/
 * OnlineConversionAdjustments/Apply` (headers AuthenticationToken, DeveloperToken, CustomerId, CustomerAccountId). It
 * answers `{ PartialErrors: [...] }`, a BatchError per refused item by Index, an AdApiFaultDetail (code 105) for
 * wrong credentials, and, queued with queueAdjustment, a CallRateExceeded (code 117) throttle.
 *
 * Refresh tokens rotate as the identity platform's reference says (adapter README "Refresh tokens"): every refresh
 * answers a new one and the one sent stays valid; each lives `refreshTokenLifetimeMs` (90 days) from its issue, and is
 * refused with invalid_grant (AADSTS700082) after. `keepRotations` refuses tokens that many rotations behind the newest,
 * `revokeRefreshToken` one token (a user who withdrew consent), for the paths an operator has to mend.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { MICROSOFT_ADS_API_VERSION } from '../../adapters/ads/microsoft-ads/version.ts'
import { bearer, isObject, isSha256Hex, jsonBody, reply } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from './server.ts'

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
  /** The Campaign Management credentials the fake accepts; pass them as `adjustments`. */
  campaign: { clientId: string, clientSecret: string, refreshToken: string, developerToken: string, customerId: string, accountId: string }
  /** The token endpoint, to pass as `adjustments.oauthUrl` (`apiUrl` is `url`). */
  oauthUrl: string
  /** Every token request's form fields. */
  tokenRequests: Record<string, string>[]
  /** Every refresh token the endpoint issued, oldest first. */
  issuedRefreshTokens: string[]
  /** Refuse this refresh token from now on (invalid_grant). */
  revokeRefreshToken: (token: string) => void
  /** A user signs in again (authorization code flow): a new refresh token the endpoint takes, to configure. */
  signIn: () => string
  /** Every adjustment Microsoft applied, in order. */
  adjustments: Record<string, unknown>[]
  /** Every Apply call: its headers and body, whatever the answer. */
  adjustmentCalls: { headers: RecordedRequest['headers'], body: Record<string, any> | undefined }[]
  /** Answer the next Apply calls with these replies (a throttle); other routes are unaffected. */
  queueAdjustment: (...replies: FakeReply[]) => void
}

export interface FakeMicrosoftAdsOptions {
  tagId?: string
  apiToken?: string
  /** The fake's clock, in ms (events in the future, refresh-token lifetimes). */
  now?: () => number
  /** Conversion goals by name → the event action they count (ConversionName of an adjustment); default Purchases → purchase. */
  goals?: Record<string, string>
  /** The access tokens' expires_in; default 3599. At 60 or less dcgate caches none and refreshes on every call. */
  accessTokenLifetimeSeconds?: number
  /** How long a refresh token is taken after it was issued, by `now`; default 90 days. */
  refreshTokenLifetimeMs?: number
  /** Refuse tokens more than this many rotations behind the newest; default none (Microsoft revokes none on rotation). */
  keepRotations?: number
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
  /** Campaign Management: wrong access or developer token (AdApiFaultDetail, code 105 InvalidCredentials). */
  invalidCredentials: (): FakeReply => ({
    status: 401,
    body: { TrackingId: randomUUID(), Type: 'AdApiFaultDetail', Errors: [{ Code: 105, Detail: null, ErrorCode: 'InvalidCredentials', Message: 'Authentication failed. Either supplied credentials are invalid or the account is inactive' }] },
  }),
  /** Campaign Management: the per-minute call limit (code 117 CallRateExceeded), as an ApiFaultDetail operation error. */
  callRateExceeded: (): FakeReply => ({
    status: 400,
    body: { TrackingId: randomUUID(), Type: 'ApiFaultDetail', BatchErrors: [], OperationErrors: [{ Code: 117, Details: null, ErrorCode: 'CallRateExceeded', Message: 'You have exceeded the number of calls allowed in a minute. Make fewer calls per minute.' }] },
  }),
}

const MAX_EVENTS = 1000
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
  const goals = options.goals ?? { Purchases: 'purchase' }
  const campaign = { clientId: '3c1b1c3a-5f0e-4a57-9d5e-6f0e1d2a7b10', clientSecret: 'fake~ms-client-secret', refreshToken: 'M.C5_fake-refresh-token', developerToken: 'FAKEDEVTOKEN123', customerId: '251186883', accountId: '187004321' }
  const tokens = new Set<string>()
  // Each refresh token the endpoint takes: when it was issued and its place in the chain (the configured one is 0).
  const refreshTokens = new Map<string, { issuedAt: number, generation: number }>([[campaign.refreshToken, { issuedAt: now(), generation: 0 }]])
  const issuedRefreshTokens: string[] = []
  const refreshLifetimeMs = options.refreshTokenLifetimeMs ?? 90 * 86_400_000
  const tokenRequests: Record<string, string>[] = []
  const adjustments: Record<string, unknown>[] = []
  const adjustmentCalls: FakeMicrosoftAds['adjustmentCalls'] = []
  const adjustmentReplies: FakeReply[] = []
  const retracted = new Set<string>()

  function token(request: RecordedRequest): FakeReply {
    const form = Object.fromEntries(new URLSearchParams(request.body))
    tokenRequests.push(form)
    const refuse = (status: number, error: string, description: string, code = status === 401 ? 7000215 : 70000) => ({ status, body: { error, error_description: `${description}\r\nTrace ID: ${randomUUID()}`, error_codes: [code] } })
    if (form.grant_type !== 'refresh_token') return refuse(400, 'unsupported_grant_type', 'AADSTS70003: The app requested an unsupported grant type.')
    if (form.client_id !== campaign.clientId) return refuse(400, 'unauthorized_client', 'AADSTS700016: Application was not found in the directory.')
    if (form.client_secret !== campaign.clientSecret) return refuse(401, 'invalid_client', 'AADSTS7000215: Invalid client secret provided.')
    const sent = refreshTokens.get(String(form.refresh_token))
    if (!sent) return refuse(400, 'invalid_grant', 'AADSTS70000: The provided value for the refresh token is not valid.')
    if (now() - sent.issuedAt > refreshLifetimeMs) return refuse(400, 'invalid_grant', 'AADSTS700082: The refresh token has expired due to inactivity.', 700082)
    if (options.keepRotations !== undefined && issuedRefreshTokens.length - sent.generation > options.keepRotations) {
      return refuse(400, 'invalid_grant', 'AADSTS70000: The provided value for the refresh token is not valid.')
    }
    if (!form.scope?.split(' ').includes('https://ads.microsoft.com/msads.manage')) return refuse(400, 'invalid_scope', 'AADSTS70011: The provided value for the input parameter \'scope\' is not valid.')
    const accessToken = `EwB${randomBytes(24).toString('base64url')}`
    tokens.add(accessToken)
    const refreshToken = `M.C5_${randomBytes(12).toString('base64url')}`
    issuedRefreshTokens.push(refreshToken)
    refreshTokens.set(refreshToken, { issuedAt: now(), generation: issuedRefreshTokens.length })
    const expiresIn = options.accessTokenLifetimeSeconds ?? 3599
    return { status: 200, body: { token_type: 'Bearer', scope: 'https://ads.microsoft.com/msads.manage', expires_in: expiresIn, ext_expires_in: expiresIn, access_token: accessToken, refresh_token: refreshToken } }
  }

  /** ApplyOnlineConversionAdjustments: each item must name a goal and a transaction Microsoft received for its action. */
  function applyOnline(request: RecordedRequest): FakeReply {
    const body = jsonBody(request)
    adjustmentCalls.push({ headers: request.headers, body })
    const queued = adjustmentReplies.shift()
    if (queued) return queued
    const header = (name: string) => request.headers[name.toLowerCase()]
    if (!tokens.has(String(header('AuthenticationToken'))) || header('DeveloperToken') !== campaign.developerToken) return microsoftErrors.invalidCredentials()
    if (header('CustomerId') !== campaign.customerId || header('CustomerAccountId') !== campaign.accountId) {
      return { status: 403, body: { TrackingId: randomUUID(), Type: 'AdApiFaultDetail', Errors: [{ Code: 106, Detail: null, ErrorCode: 'UserIsNotAuthorized', Message: 'The user is not authorized to access this account.' }] } }
    }
    const items = body?.OnlineConversionAdjustments
    if (!Array.isArray(items) || items.length === 0) {
      return { status: 400, body: { TrackingId: randomUUID(), Type: 'ApiFaultDetail', BatchErrors: [], OperationErrors: [{ Code: 100, Details: null, ErrorCode: 'NullRequest', Message: 'The request message is null.' }] } }
    }
    const PartialErrors: Record<string, unknown>[] = []
    items.forEach((item: unknown, Index) => {
      const problem = checkAdjustment(item)
      if (problem) PartialErrors.push({ Code: problem[0], Details: null, ErrorCode: problem[1], FieldPath: null, ForwardCompatibilityMap: null, Index, Message: problem[2], Type: 'BatchError' })
      else adjustments.push(item as Record<string, unknown>)
    })
    return { status: 200, body: { PartialErrors: PartialErrors.length > 0 ? PartialErrors : null } }
  }

  /** [Code, ErrorCode, Message] when the item is refused. Codes for these cases are not documented; the fake names its own. */
  function checkAdjustment(item: unknown): [number, string, string] | undefined {
    if (!isObject(item)) return [1, 'InvalidAdjustment', 'Each adjustment must be an object.']
    const { AdjustmentType: type, AdjustmentValue: value, ConversionName: name, TransactionId: id, AdjustmentTime: time } = item
    if (type !== 'Retract' && type !== 'Restate') return [2, 'InvalidAdjustmentType', 'AdjustmentType must be Retract or Restate.']
    if (typeof time !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(time)) return [3, 'InvalidAdjustmentTime', 'AdjustmentTime must be a UTC dateTime.']
    if (type === 'Restate' && typeof value !== 'number') return [4, 'AdjustmentValueRequired', 'An adjustment value is required but not provided.']
    if (type === 'Retract' && value !== undefined && value !== null) return [5, 'AdjustmentValueNotExpected', 'An adjustment value is provided when it is not expected.']
    const action = typeof name === 'string' ? goals[name] : undefined
    if (!action) return [6, 'ConversionGoalNotFound', 'The conversion name does not match a conversion goal of this account.']
    const original = batches.flatMap((batch) => batch.data).find((event) => event.eventName === action && (event.customData as Record<string, unknown> | undefined)?.transactionId === id)
    if (typeof id !== 'string' || !original) return [7, 'OnlineConversionNotFound', 'No online conversion with this transaction id was found for the conversion goal.']
    if (Date.parse(time) < Number(original.eventTime) * 1000) return [8, 'AdjustmentTimeEarlierThanConversionTime', 'The adjustment time is earlier than the conversion time.']
    if (retracted.has(`${name}\n${id}`)) return [9, 'OnlineConversionAlreadyRetracted', 'The online conversion was already retracted.']
    if (type === 'Retract') retracted.add(`${name}\n${id}`)
    return undefined
  }

  const server = await startFakeServer((request) => {
    if (request.method === 'POST' && /^\/common\/oauth2\/v2\.0\/token\/?$/.test(request.path)) return token(request)
    if (request.method === 'POST' && /^\/CampaignManagement\/v13\/OnlineConversionAdjustments\/Apply\/?$/.test(request.path)) return applyOnline(request)
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
    campaign,
    oauthUrl: `${server.url}/common/oauth2/v2.0/token`,
    tokenRequests,
    issuedRefreshTokens,
    revokeRefreshToken: (token) => void refreshTokens.delete(token),
    signIn: () => {
      const refreshToken = `M.C5_signin-${randomBytes(12).toString('base64url')}`
      refreshTokens.set(refreshToken, { issuedAt: now(), generation: issuedRefreshTokens.length })
      return refreshToken
    },
    adjustments,
    adjustmentCalls,
    queueAdjustment: (...replies) => void adjustmentReplies.push(...replies),
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
  // No lower bound: the guide documents no age limit for eventTime (adapter README "Event age").
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
