/**
 * A fake X Ads API serving POST /{version}/measurement/conversions/{pixelId}. It verifies the OAuth 1.0a HMAC-SHA1
 * signature for real (recomputed here, independently of the adapter's oauth1.ts, from the secrets it knows, the
 * method, the URL it was called on and the query), refuses stale timestamps and replayed nonces, checks what X's
 * Conversions API documents (research: ad-platforms-microsoft-reddit-pinterest-x-crm-webhooks.md §A4, and X's
 * web-conversions guide), and answers with X's success and error bodies. Queue xErrors.* to inject failures.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto'
import { X_ADS_API_VERSION } from '../../adapters/ads/x/version.ts'
import { isObject, isSha256Hex, parseJson, reply } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from './server.ts'

export interface XBatch {
  pixelId: string
  conversions: Record<string, unknown>[]
}

export interface FakeX extends FakeServer {
  consumerKey: string
  consumerSecret: string
  accessToken: string
  accessTokenSecret: string
  pixelId: string
  /** The events of the pixel's ad account (bare base36 ids); the first four are meant for the standard events. */
  eventIds: readonly string[]
  accountId: string
  /** Every batch X accepted, in order. */
  batches: XBatch[]
  /** Every accepted conversion, in order, across batches. */
  readonly conversions: Record<string, unknown>[]
}

export interface FakeXOptions {
  pixelId?: string
  eventIds?: readonly string[]
  version?: string
  /** The fake's clock, in ms: OAuth timestamps and conversion_time are judged against it. */
  now?: () => number
}

/** How far an oauth_timestamp may be from the fake's clock. X only says it refuses ones "too far in the past". */
const TIMESTAMP_SKEW_S = 300

/** X's error envelope: `{ errors: [{ code, message, parameter? }], request: { params } }`. */
export function xError(status: number, errors: XErrorItem[], params: Record<string, unknown> = {}, headers?: Record<string, string>): FakeReply {
  return reply(status, { errors, request: { params } }, headers)
}

/** X's answers for failures a test can queue. */
export const xErrors = {
  unauthorized: (): FakeReply => xError(401, [{ code: 'UNAUTHORIZED_ACCESS', message: 'This request is not properly authenticated' }]),
  /** X documents only the code for 429; the message is the REST API's wording. */
  rateLimited: (resetAtS?: number): FakeReply => xError(429, [{ code: 'TOO_MANY_REQUESTS', message: 'Rate limit exceeded' }], {}, resetAtS === undefined ? undefined : { 'x-rate-limit-limit': '60000', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(resetAtS) }),
  overCapacity: (): FakeReply => xError(503, [{ code: 'OVER_CAPACITY', message: 'Over capacity' }]),
  internal: (): FakeReply => xError(500, [{ code: 'INTERNAL_ERROR', message: 'Internal error' }]),
  unauthorizedClient: (appId = '16489123'): FakeReply => xError(403, [{ code: 'UNAUTHORIZED_CLIENT_APPLICATION', message: `The client application with id ${appId} making this request does not have access to X Ads API. Ensure your application has advertiser-api access.` }]),
  noAccountAccess: (userId: string, accountId: string): FakeReply => xError(404, [{ code: 'NOT_FOUND', message: `User ${userId} does not have access to account ${accountId}.` }], { account_id: accountId }),
}

export async function startFakeX(options: FakeXOptions = {}): Promise<FakeX> {
  const secrets = {
    consumerKey: 'xvz1evFS4wEEPTGEFPHBogFake',
    consumerSecret: 'kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBwFake',
    accessToken: '370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEbFake',
    accessTokenSecret: 'LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kEFake',
  }
  const pixelId = options.pixelId ?? 'o8z6j'
  const eventIds = options.eventIds ?? ['o87ne', 'o87nf', 'o87ng', 'o87nh', 'otest']
  const version = options.version ?? X_ADS_API_VERSION
  const now = options.now ?? Date.now
  const accountId = '18ce552mlaq'
  const usedNonces = new Set<string>()
  const batches: XBatch[] = []

  const server = await startFakeServer((request) => {
    const url = new URL(request.path, `http://${request.headers.host ?? 'fake.invalid'}`)
    const route = /^\/(\d+)\/measurement\/conversions\/([^/]+)$/.exec(url.pathname)
    if (!route || route[1] !== version) return xError(404, [{ code: 'ROUTE_NOT_FOUND', message: 'The requested resource could not be found' }])
    if (!authentic(request, url, secrets, now() / 1000, usedNonces)) return xErrors.unauthorized()
    if (request.method !== 'POST') return xError(405, [{ code: 'METHOD_NOT_ALLOWED', message: `${request.method} is not allowed` }])
    if (route[2] !== pixelId) return xErrors.noAccountAccess('370773112', accountId)
    const params = { account_id: accountId }
    const checked = checkConversions(parseJson(request.body), { pixelId, eventIds, nowMs: now() })
    if ('errors' in checked) return xError(checked.status, checked.errors, params)
    batches.push({ pixelId, conversions: checked.conversions })
    return {
      status: 200,
      headers: { 'x-rate-limit-limit': '60000', 'x-rate-limit-remaining': '59999', 'x-rate-limit-reset': String(Math.ceil(now() / 1000) + 900) },
      body: { request: { params }, data: { conversions_processed: checked.conversions.length, debug_id: randomUUID() } },
    }
  })
  return {
    ...server,
    ...secrets,
    pixelId,
    eventIds,
    accountId,
    batches,
    get conversions() {
      return batches.flatMap((batch) => batch.conversions)
    },
  }
}

// --- OAuth 1.0a verification (RFC 5849 §3.4, written apart from the adapter's signer on purpose) ---

function authentic(request: RecordedRequest, url: URL, secrets: Record<'consumerKey' | 'consumerSecret' | 'accessToken' | 'accessTokenSecret', string>, nowS: number, usedNonces: Set<string>): boolean {
  const oauth = readOAuthHeader(String(request.headers.authorization ?? ''))
  if (!oauth) return false
  const given = oauth.get('oauth_signature')
  const nonce = oauth.get('oauth_nonce')
  const timestamp = Number(oauth.get('oauth_timestamp'))
  if (oauth.get('oauth_consumer_key') !== secrets.consumerKey || oauth.get('oauth_token') !== secrets.accessToken) return false
  if (oauth.get('oauth_signature_method') !== 'HMAC-SHA1' || (oauth.has('oauth_version') && oauth.get('oauth_version') !== '1.0')) return false
  if (!given || !nonce || !Number.isInteger(timestamp) || Math.abs(nowS - timestamp) > TIMESTAMP_SKEW_S || usedNonces.has(nonce)) return false
  const form = String(request.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded') ? [...new URLSearchParams(request.body)] : []
  const pairs = [...url.searchParams, ...form, ...[...oauth].filter(([key]) => key !== 'oauth_signature')]
    .map(([key, value]) => [rfc3986(key), rfc3986(value)] as const)
    .sort(([keyA, valueA], [keyB, valueB]) => keyA === keyB ? (valueA < valueB ? -1 : 1) : keyA < keyB ? -1 : 1)
  const parameters = pairs.map(([key, value]) => `${key}=${value}`).join('&')
  const base = `${request.method}&${rfc3986(`${url.protocol}//${url.host}${url.pathname}`)}&${rfc3986(parameters)}`
  const expected = createHmac('sha1', `${rfc3986(secrets.consumerSecret)}&${rfc3986(secrets.accessTokenSecret)}`).update(base).digest()
  const received = Buffer.from(given, 'base64')
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) return false
  usedNonces.add(nonce)
  return true
}

/** `OAuth a="1", b="2"` → decoded pairs; undefined when it is not an OAuth header. */
function readOAuthHeader(header: string): Map<string, string> | undefined {
  if (!/^OAuth\s/i.test(header)) return undefined
  const params = new Map<string, string>()
  for (const [, key, value] of header.slice(6).matchAll(/([\w-]+)="([^"]*)"/g)) params.set(decodeURIComponent(key!), decodeURIComponent(value!))
  return params
}

function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
}

// --- what the Conversions API checks ---

export interface XErrorItem { code: string, message: string, parameter?: string }

const X_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const CONVERSION_KEYS = new Set(['conversion_time', 'event_id', 'identifiers', 'number_items', 'price_currency', 'value', 'conversion_id', 'description', 'contents'])
const IDENTIFIER_KEYS = new Set(['twclid', 'hashed_email', 'hashed_phone_number', 'ip_address', 'user_agent'])
const MATCH_KEYS = ['twclid', 'hashed_email', 'hashed_phone_number']
/** X documents no age limit; the fake refuses what the adapter's maxEventAgeDays (90) should already keep back. */
const MAX_AGE_MS = 90 * 86_400_000

type Checked = { conversions: Record<string, unknown>[] } | { status: number, errors: XErrorItem[] }

function checkConversions(body: unknown, ctx: { pixelId: string, eventIds: readonly string[], nowMs: number }): Checked {
  const conversions = isObject(body) ? body.conversions : undefined
  if (!Array.isArray(conversions) || conversions.length === 0) return { status: 400, errors: [{ code: 'MISSING_PARAMETER', message: '"conversions" is a required parameter', parameter: 'conversions' }] }
  if (conversions.length > 500) return { status: 400, errors: [{ code: 'INVALID_PARAMETER', message: 'Conversion count limit is 500', parameter: 'conversions' }] }
  const errors: XErrorItem[] = []
  const unknownEvents: XErrorItem[] = []
  for (const conversion of conversions) {
    if (!isObject(conversion)) {
      errors.push(invalid('each conversion must be an object', 'conversions'))
      continue
    }
    for (const key of Object.keys(conversion)) if (!CONVERSION_KEYS.has(key)) errors.push(invalid(`Unknown parameter ${key}`, key))
    errors.push(...checkTime(conversion.conversion_time, ctx.nowMs), ...checkIdentifiers(conversion.identifiers), ...checkValues(conversion))
    const eventId = conversion.event_id
    if (typeof eventId !== 'string' || !eventId) errors.push({ code: 'MISSING_PARAMETER', message: 'Event ID was not found', parameter: 'event_id' })
    else if (!knownEvent(eventId, ctx)) {
      unknownEvents.push({ code: 'NOT_FOUND', message: `event_id (${eventId}) does not belong to provided account`, parameter: 'event_id' })
      unknownEvents.push(invalid(`event_id (${eventId}) is not a single event tag (SET)`, 'event_id'))
    }
  }
  if (unknownEvents.length > 0) return { status: 404, errors: [...unknownEvents, ...errors] }
  return errors.length > 0 ? { status: 400, errors } : { conversions: conversions as Record<string, unknown>[] }
}

function knownEvent(eventId: string, ctx: { pixelId: string, eventIds: readonly string[] }): boolean {
  const full = /^tw-([a-z0-9]+)-([a-z0-9]+)$/.exec(eventId)
  if (full) return full[1] === ctx.pixelId && ctx.eventIds.includes(full[2]!)
  return ctx.eventIds.includes(eventId)
}

function checkTime(time: unknown, nowMs: number): XErrorItem[] {
  if (typeof time !== 'string' || !X_TIME.test(time) || Number.isNaN(Date.parse(time))) {
    return [invalid(`Expected Time in yyyy-MM-ddTHH:mm:ss.SSSZ, got ${JSON.stringify(time ?? '')} for conversion_time`, 'conversion_time')]
  }
  return Date.parse(time) < nowMs - MAX_AGE_MS ? [invalid(`conversion_time (${time}) is more than 90 days in the past`, 'conversion_time')] : []
}

function checkIdentifiers(identifiers: unknown): XErrorItem[] {
  if (!Array.isArray(identifiers) || !identifiers.every(isObject)) return [invalid('identifiers must be an array of identifier objects', 'identifiers')]
  const errors: XErrorItem[] = []
  for (const identifier of identifiers) {
    for (const [key, value] of Object.entries(identifier)) {
      if (!IDENTIFIER_KEYS.has(key)) errors.push(invalid(`Unknown identifier ${key}`, key))
      else if (typeof value !== 'string') errors.push(invalid(`${key} must be a string`, key))
      else if ((key === 'hashed_email' || key === 'hashed_phone_number') && !isSha256Hex(value)) errors.push(invalid(`${key} (${value}) is not a valid SHA-256 hash`, key))
    }
  }
  const matchable = identifiers.some((identifier) => MATCH_KEYS.some((key) => typeof identifier[key] === 'string' && identifier[key] !== ''))
  return matchable ? errors : [{ code: 'INVALID_PARAMETER', message: 'At least one user identifier must be provided', parameter: '' }, ...errors]
}

function checkValues(conversion: Record<string, unknown>): XErrorItem[] {
  const errors: XErrorItem[] = []
  const { value, price_currency: currency, number_items: numberItems, contents } = conversion
  if (value !== undefined && !(typeof value === 'number' || (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)))) errors.push(invalid(`Expected Double, got ${JSON.stringify(value)} for value`, 'value'))
  if (currency !== undefined && (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency))) errors.push(invalid(`${JSON.stringify(currency)} is not a valid ISO-4217 currency for price_currency`, 'price_currency'))
  if (numberItems !== undefined && !positiveInteger(numberItems)) errors.push(invalid('number_items must be a positive number greater than zero', 'number_items'))
  if (contents !== undefined && (!Array.isArray(contents) || !contents.every((c) => isObject(c) && (c.num_items === undefined || positiveInteger(c.num_items)) && (c.content_price === undefined || typeof c.content_price === 'number')))) {
    errors.push(invalid('contents must be an array of content objects', 'contents'))
  }
  return errors
}

function invalid(message: string, parameter: string): XErrorItem {
  return { code: 'INVALID_PARAMETER', message, parameter }
}

function positiveInteger(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value > 0
}
