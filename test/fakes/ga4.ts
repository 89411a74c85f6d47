/**
 * A fake Google Analytics 4 Measurement Protocol, answering as its reference says (adapters/ads/ga4/README.md):
 * `/mp/collect` answers 204 with no body whatever it receives (malformed events and a wrong api_secret are dropped
 * silently; only well-formed events for this stream are recorded), and `/debug/mp/collect` records nothing and
 * answers 200 with `{ validationMessages: [{ fieldPath, description, validationCode }] }`, empty when valid.
 */
import { isObject, isSha256Hex, parseJson } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer } from './server.ts'

export interface Ga4Request { clientId: string, userId?: string, consent?: Record<string, string>, userData?: Record<string, unknown>, events: Record<string, any>[] }

export interface FakeGa4 extends FakeServer {
  measurementId: string
  apiSecret: string
  /** Every request /mp/collect kept, in order. */
  collected: Ga4Request[]
  /** Every event kept, in order, with the client_id of its request. */
  readonly events: (Record<string, any> & { client_id: string })[]
  /** Every request the validation server checked, with its verdict. */
  validated: { body: unknown, messages: ValidationMessage[] }[]
}

export interface ValidationMessage { fieldPath: string, description: string, validationCode: string }

const MAX_EVENTS = 25
const MAX_PARAMS = 25
const MAX_AGE_MICROS = 72 * 3_600_000 * 1000
const FUTURE_SKEW_MICROS = 15 * 60_000 * 1000
const NAME = /^[A-Za-z]\w{0,39}$/
const CONSENT = new Set(['GRANTED', 'DENIED'])
const BODY_KEYS = new Set(['client_id', 'user_id', 'timestamp_micros', 'user_properties', 'user_data', 'consent', 'non_personalized_ads', 'events', 'user_location', 'device', 'ip_override', 'validation_behavior'])

const message = (fieldPath: string, description: string, validationCode: string): ValidationMessage => ({ fieldPath, description, validationCode })

/** Answers to queue for failure scenarios: the protocol itself documents none, a proxy or Google's front end may. */
export const ga4Errors = {
  unavailable: (): FakeReply => ({ status: 503, headers: { 'content-type': 'text/html' }, body: '<html><body>Service Unavailable. The server is temporarily unable to service your request.</body></html>' }),
  rateLimited: (): FakeReply => ({ status: 429, headers: { 'content-type': 'text/html' }, body: '<html><body>Too Many Requests. Our systems have detected unusual traffic.</body></html>' }),
  forbidden: (): FakeReply => ({ status: 403, headers: { 'content-type': 'text/html' }, body: '<html><body>403 Forbidden. Your client does not have permission to get URL /mp/collect from this server.</body></html>' }),
}

export async function startFakeGa4(options: { measurementId?: string, apiSecret?: string, now?: () => number } = {}): Promise<FakeGa4> {
  const measurementId = options.measurementId ?? 'G-FAKE4TEST1'
  const apiSecret = options.apiSecret ?? 'fakeMpSecret_9aZ-Qx'
  const now = options.now ?? Date.now
  const collected: Ga4Request[] = []
  const validated: FakeGa4['validated'] = []

  const server = await startFakeServer((request) => {
    const url = new URL(request.path, 'http://fake')
    const debug = url.pathname === '/debug/mp/collect'
    if (request.method !== 'POST' || (!debug && url.pathname !== '/mp/collect')) return { status: 404, headers: { 'content-type': 'text/html' }, body: '<html><body>404. That\'s an error.</body></html>' }
    const body = parseJson(request.body)
    const messages = validate(body, now() * 1000)
    if (debug) {
      validated.push({ body, messages })
      return { status: 200, body: { validationMessages: messages } }
    }
    const ours = url.searchParams.get('measurement_id') === measurementId && url.searchParams.get('api_secret') === apiSecret
    if (ours && messages.length === 0 && isObject(body)) {
      collected.push({ clientId: body.client_id, ...(body.user_id ? { userId: body.user_id } : {}), ...(body.consent ? { consent: body.consent } : {}), ...(body.user_data ? { userData: body.user_data } : {}), events: body.events })
    }
    return { status: 204, body: '' }
  })
  return {
    ...server,
    measurementId,
    apiSecret,
    collected,
    validated,
    get events() {
      return collected.flatMap((one) => one.events.map((event) => ({ ...event, client_id: one.clientId })))
    },
  }
}

// --- internal ---

function validate(body: unknown, nowMicros: number): ValidationMessage[] {
  if (!isObject(body)) return [message('', 'Unable to parse Measurement Protocol JSON payload.', 'VALUE_INVALID')]
  const messages: ValidationMessage[] = []
  for (const key of Object.keys(body)) if (!BODY_KEYS.has(key)) messages.push(message(key, `Unknown field [${key}].`, 'VALUE_INVALID'))
  if (typeof body.client_id !== 'string' || !body.client_id) messages.push(message('client_id', 'Measurement requires a client_id.', 'VALUE_REQUIRED'))
  if (body.user_id !== undefined && (typeof body.user_id !== 'string' || body.user_id.length > 256)) messages.push(message('user_id', 'user_id must be a string of at most 256 characters.', 'VALUE_INVALID'))
  if (body.consent !== undefined) {
    for (const [key, value] of Object.entries(isObject(body.consent) ? body.consent : {})) {
      if (!['ad_user_data', 'ad_personalization'].includes(key) || !CONSENT.has(String(value))) messages.push(message(`consent.${key}`, `Consent [${key}] must be GRANTED or DENIED.`, 'VALUE_INVALID'))
    }
  }
  for (const [key, values] of Object.entries(isObject(body.user_data) ? body.user_data : {})) {
    if (!['sha256_email_address', 'sha256_phone_number'].includes(key)) continue
    if (!Array.isArray(values) || values.length > 10 || values.some((value) => !isSha256Hex(value))) messages.push(message(`user_data.${key}`, `${key} must hold up to 10 SHA-256 hex digests.`, 'VALUE_INVALID'))
  }
  const events = body.events
  if (!Array.isArray(events) || events.length === 0) return [...messages, message('events', 'Measurement requires at least one event.', 'VALUE_REQUIRED')]
  if (events.length > MAX_EVENTS) messages.push(message('events', `Measurement has [${events.length}] events, which exceeds the maximum of [${MAX_EVENTS}].`, 'VALUE_OUT_OF_BOUNDS'))
  events.forEach((event: unknown, index: number) => messages.push(...validateEvent(event, index, nowMicros)))
  return messages
}

function validateEvent(event: unknown, index: number, nowMicros: number): ValidationMessage[] {
  if (!isObject(event)) return [message(`events[${index}]`, `Event at index: [${index}] is not an object.`, 'VALUE_INVALID')]
  const problems: ValidationMessage[] = []
  if (typeof event.name !== 'string' || !NAME.test(event.name)) problems.push(message('events', `Event at index: [${index}] has invalid name [${String(event.name)}]. Names must start with an alphabetic character.`, 'NAME_INVALID'))
  const at = event.timestamp_micros
  if (at !== undefined && (!Number.isInteger(at) || at < nowMicros - MAX_AGE_MICROS || at > nowMicros + FUTURE_SKEW_MICROS)) {
    problems.push(message(`events[${index}].timestamp_micros`, `Event at index: [${index}] has a timestamp_micros outside the 72 hours before the request.`, 'VALUE_OUT_OF_BOUNDS'))
  }
  const params = isObject(event.params) ? event.params : {}
  if (Object.keys(params).length > MAX_PARAMS) problems.push(message(`events[${index}].params`, `Event at index: [${index}] has more than ${MAX_PARAMS} params.`, 'VALUE_OUT_OF_BOUNDS'))
  if (params.value !== undefined && (typeof params.value !== 'number' || !/^[A-Z]{3}$/.test(String(params.currency)))) {
    problems.push(message(`events[${index}].params.currency`, `Event at index: [${index}] has a value without a valid ISO 4217 currency.`, 'VALUE_REQUIRED'))
  }
  if (['purchase', 'refund'].includes(event.name) && (typeof params.transaction_id !== 'string' || !params.transaction_id)) {
    problems.push(message(`events[${index}].params.transaction_id`, `Event at index: [${index}] [${event.name}] requires a transaction_id.`, 'VALUE_REQUIRED'))
  }
  if (params.items !== undefined && (!Array.isArray(params.items) || params.items.some((item: any) => !isObject(item) || (!item.item_id && !item.item_name)))) {
    problems.push(message(`events[${index}].params.items`, `Event at index: [${index}] has an item without item_id or item_name.`, 'VALUE_REQUIRED'))
  }
  return problems
}
