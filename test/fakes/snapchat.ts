/**
 * A fake Snapchat Conversions API v3, answering as Snap documents it (adapters/ads/snapchat/README.md):
 * `POST /v3/{pixelId}/events?access_token=…` records the events and answers 200; `/events/validate` checks the same
 * and records nothing. A bad request answers 400 `{ status: 'INVALID', reason }` for Verify Set Up's cases (a missing
 * required field, a purchase without price or currency, a timestamp out of range, unhashed or insufficient PII).
 */
import { isObject, isSha256Hex, parseJson } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer } from './server.ts'

export interface FakeSnapchat extends FakeServer {
  pixelId: string
  accessToken: string
  /** Every event Snap recorded, in order. */
  events: Record<string, any>[]
  /** Every event the validate endpoint found valid, in order. */
  validated: Record<string, any>[]
}

const MAX_EVENTS = 2000
const MAX_AGE_S = 37 * 86_400
const FUTURE_SKEW_S = 5 * 60
const ACTION_SOURCES = new Set(['WEB', 'MOBILE_APP', 'OFFLINE'])
const HASHED_LIST_KEYS = ['em', 'ph', 'fn', 'ln', 'ct', 'st', 'zp', 'country']

const invalid = (reason: string): FakeReply => ({ status: 400, body: { status: 'INVALID', reason } })

/** Snap's answers to queue for failure scenarios. */
export const snapchatErrors = {
  unauthorized: (): FakeReply => ({ status: 401, body: { status: 'UNAUTHORIZED', reason: 'Invalid access token for the given asset id' } }),
  rateLimited: (): FakeReply => ({ status: 429, body: { status: 'RATE_LIMITED', reason: 'Too many requests, please retry later' } }),
  unavailable: (): FakeReply => ({ status: 503, body: { status: 'INTERNAL_ERROR', reason: 'Service temporarily unavailable' } }),
  invalid,
}

export async function startFakeSnapchat(options: { pixelId?: string, accessToken?: string, now?: () => number } = {}): Promise<FakeSnapchat> {
  const pixelId = options.pixelId ?? '1ec32188-754e-4be2-8e55-c949a984a39f'
  const accessToken = options.accessToken ?? 'eyJhbGciOiJIUzI1NiIsImtpZCI6ImZha2UtY2FwaSJ9.fake-snap-capi-token'
  const now = options.now ?? Date.now
  const events: Record<string, any>[] = []
  const validated: Record<string, any>[] = []

  const server = await startFakeServer((request) => {
    const url = new URL(request.path, 'http://fake')
    const path = /^\/v3\/([^/]+)\/events(\/validate)?$/.exec(url.pathname)
    if (!path || request.method !== 'POST') return { status: 404, body: { status: 'NOT_FOUND', reason: 'Not found' } }
    if (url.searchParams.get('access_token') !== accessToken || decodeURIComponent(path[1]!) !== pixelId) return snapchatErrors.unauthorized()
    const body = parseJson(request.body)
    const data = isObject(body) ? body.data : undefined
    if (!Array.isArray(data) || data.length === 0) return invalid('data is required and must be a non-empty array')
    if (data.length > MAX_EVENTS) return invalid(`a request may carry at most ${MAX_EVENTS} events`)
    for (const [index, event] of data.entries()) {
      const problem = checkEvent(event, Math.floor(now() / 1000))
      if (problem) return invalid(`data[${index}]: ${problem}`)
    }
    ;(path[2] ? validated : events).push(...data)
    return { status: 200, body: { status: 'SUCCESS', reason: 'SUCCESS' } }
  })
  return { ...server, pixelId, accessToken, events, validated }
}

function checkEvent(event: unknown, nowS: number): string | undefined {
  if (!isObject(event)) return 'each event must be an object'
  for (const field of ['event_name', 'event_time', 'action_source']) if (event[field] === undefined) return `missing required field ${field}`
  if (!ACTION_SOURCES.has(event.action_source)) return `invalid action_source ${String(event.action_source)}`
  if (event.action_source === 'WEB' && typeof event.event_source_url !== 'string') return 'missing required field event_source_url for a WEB event'
  if (!Number.isInteger(event.event_time) || event.event_time < nowS - MAX_AGE_S || event.event_time > nowS + FUTURE_SKEW_S) return 'timestamp invalid or out of range'
  const custom = isObject(event.custom_data) ? event.custom_data : {}
  if (event.event_name === 'PURCHASE' && (custom.value === undefined) !== (custom.currency === undefined)) return 'missing price and/or currency in Purchase event'
  const user = isObject(event.user_data) ? event.user_data : {}
  for (const key of HASHED_LIST_KEYS) {
    if (user[key] !== undefined && (!Array.isArray(user[key]) || user[key].some((value: unknown) => !isSha256Hex(value)))) return `unhashed PII in user_data.${key}`
  }
  if (user.external_id !== undefined && !isSha256Hex(user.external_id)) return 'unhashed PII in user_data.external_id'
  const keys = ['em', 'ph', 'external_id', 'sc_click_id', 'sc_cookie1'].some((key) => user[key]) || (user.client_ip_address && user.client_user_agent)
  return keys ? undefined : 'insufficient PII to match the event'
}
