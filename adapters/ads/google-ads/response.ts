/**
 * Pure, default path: the Data Manager API's answer to `events:ingest` → one outcome per event, in request order.
 *
 * A 2xx is `{requestId}`: Google took the whole request. Its processing is asynchronous (requestStatus:retrieve
 * reports counts per reason, not per event), so every event is `sent`. Any other status is the standard Google error
 * model, `{error: {code, message, status, details[]}}`, and nothing in the request was processed (fast-fail). When
 * the `google.rpc.BadRequest` field violations all name events (`events[N]…`), those events are rejected with
 * Google's words and the others retried, so one bad event cannot sink a batch; otherwise every event shares the
 * outcome of the request. Sources are in the README, "How answers are classified".
 */
import type { ConversionEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { bodySnippet, isObject, isRetryableStatus, parseJson, retry, retryAfterMs } from '../../shared/helpers.ts'
import { parseUploadResponse } from './response-upload-clicks.ts'

interface FieldViolation { field?: string, description?: string, reason?: string }
interface Detail { '@type'?: string, fieldViolations?: FieldViolation[], reason?: string, retryDelay?: string, requestId?: string }
interface RpcStatus { code?: number, message?: string, status?: string, details?: Detail[] }

/** Canonical codes Google documents as temporary (AIP-193): retried with backoff, after RetryInfo when given. */
const TEMPORARY = new Set(['UNAVAILABLE', 'INTERNAL', 'DEADLINE_EXCEEDED', 'ABORTED', 'RESOURCE_EXHAUSTED'])
const EVENT_PATH = /^events\[(\d+)\]/

export const SCOPE_HINT = 'the refresh token lacks the scope of the API it calls: https://www.googleapis.com/auth/datamanager for the '
  + 'Data Manager API (the default; a token made for the Google Ads API has only .../auth/adwords), '
  + 'https://www.googleapis.com/auth/adwords for api \'upload-clicks\'. Generate a new refresh token with that scope '
  + '(google_ads README, "Credentials")'
const SERVICE_DISABLED_HINT = 'enable the API named above (Data Manager API by default) in the Google Cloud project that owns the OAuth client'

/**
 * parseResponse is not given the options, so the answer tells the path. Only the Google Ads API sends a
 * `partialFailureError` or a GoogleAdsFailure detail; those go to the legacy parser. Every other answer means the
 * same on both paths (2xx JSON: sent; non-JSON 2xx: retry; google.rpc.Status by status), and the Data Manager
 * parser reads it.
 */
export function parseGoogleAdsResponse(response: PlatformResponse, events: readonly ConversionEvent[]): DeliveryOutcome[] {
  return /"partialFailureError"\s*:|\.GoogleAdsFailure"/.test(response.body) ? parseUploadResponse(response, events) : parseIngestResponse(response, events)
}

export function parseIngestResponse(response: PlatformResponse, events: readonly ConversionEvent[]): DeliveryOutcome[] {
  const body = parseJson(response.body)
  if (response.status >= 200 && response.status < 300) {
    // A retry is safe when we cannot tell: Google keeps one conversion per transactionId and action.
    if (!isObject(body)) return events.map(() => ({ status: 'retry', message: `Google Data Manager answered HTTP ${response.status} with a body that is not JSON` }))
    return events.map(() => ({ status: 'sent' }))
  }
  const status = isObject(body) && isObject(body.error) ? body.error as RpcStatus : undefined
  const perEvent = status && response.status === 400 ? eventViolations(status, events.length) : undefined
  if (perEvent) return fromEventViolations(perEvent, status!, events.length)
  const outcome = fromRequestError(response, status)
  return events.map(() => outcome)
}

/** The violations by event index, when every violation names an event of this request; else undefined. */
function eventViolations(status: RpcStatus, count: number): Map<number, FieldViolation[]> | undefined {
  const violations = details(status, 'google.rpc.BadRequest').flatMap((d) => Array.isArray(d.fieldViolations) ? d.fieldViolations.filter(isObject) : [])
  const byEvent = new Map<number, FieldViolation[]>()
  for (const violation of violations) {
    const index = Number(EVENT_PATH.exec(String(violation.field ?? ''))?.[1] ?? -1)
    if (index < 0 || index >= count) return undefined
    byEvent.set(index, [...byEvent.get(index) ?? [], violation])
  }
  return byEvent.size ? byEvent : undefined
}

function fromEventViolations(byEvent: Map<number, FieldViolation[]>, status: RpcStatus, count: number): DeliveryOutcome[] {
  const culprits = [...byEvent.keys()].sort((a, b) => a - b)
  const held = `not processed: Google refused the whole request for ${culprits.length === 1 ? 'another event' : 'other events'} `
    + `(${culprits.map((i) => `events[${i}]`).join(', ')}: ${status.status ?? 'INVALID_ARGUMENT'}); sent again without ${culprits.length === 1 ? 'it' : 'them'}`
  return Array.from({ length: count }, (_, index): DeliveryOutcome => {
    const violations = byEvent.get(index)
    if (!violations) return { status: 'retry', message: held }
    return { status: 'rejected', message: violations.map(describeViolation).join('; ') }
  })
}

function fromRequestError(response: PlatformResponse, status: RpcStatus | undefined): DeliveryOutcome {
  const message = status ? describeStatus(response.status, status) : describeHttp(response)
  const wait = retryAfterMs(response.headers) ?? (status ? retryDelay(status) : undefined)
  if (response.status === 429 || status?.status === 'RESOURCE_EXHAUSTED') return retry(message, wait)
  // 409 is ABORTED (a concurrency conflict), retried even without Retry-After.
  if (isRetryableStatus(response.status, response.headers) || response.status === 409 || TEMPORARY.has(status?.status ?? '')) {
    return retry(message, wait)
  }
  return { status: 'rejected', message }
}

/** "PERMISSION_DENIED: <message>; ErrorInfo <reason>; field violations; request id", plus what to do for known causes. */
function describeStatus(httpStatus: number, status: RpcStatus): string {
  const reasons = details(status, 'google.rpc.ErrorInfo').map((d) => d.reason).filter((r): r is string => typeof r === 'string')
  const violations = details(status, 'google.rpc.BadRequest').flatMap((d) => Array.isArray(d.fieldViolations) ? d.fieldViolations.filter(isObject) : [])
  const requestId = details(status, 'google.rpc.RequestInfo').map((d) => d.requestId).find((id) => typeof id === 'string')
  const parts = [
    `${status.status ?? `HTTP ${httpStatus}`}: ${status.message ?? 'no message'}`,
    ...reasons.map((reason) => `reason ${reason}`),
    ...violations.map(describeViolation),
    ...(requestId ? [`request id ${requestId}`] : []),
  ]
  const hint = httpStatus === 403 && (reasons.includes('ACCESS_TOKEN_SCOPE_INSUFFICIENT') || /insufficient authentication scopes/i.test(status.message ?? ''))
    ? SCOPE_HINT
    : reasons.includes('SERVICE_DISABLED') ? SERVICE_DISABLED_HINT : undefined
  return `${parts.join('; ')}${hint ? ` (${hint})` : ''}`
}

function describeViolation(violation: FieldViolation): string {
  return `${violation.reason ?? 'INVALID_ARGUMENT'} at ${violation.field ?? '(no field)'}: ${violation.description ?? 'no description'}`
}

function describeHttp(response: PlatformResponse): string {
  const excerpt = bodySnippet(response.body)
  return `HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`
}

/** The status's details of one type ("type.googleapis.com/google.rpc.BadRequest" ends with "google.rpc.BadRequest"). */
function details(status: RpcStatus, type: string): Detail[] {
  return (Array.isArray(status.details) ? status.details : []).filter((d): d is Detail => isObject(d) && String(d['@type'] ?? '').endsWith(type))
}

/** google.rpc.RetryInfo's retryDelay, a Duration in JSON: "30s", "1.5s". */
function retryDelay(status: RpcStatus): number | undefined {
  for (const detail of details(status, 'google.rpc.RetryInfo')) {
    const match = typeof detail.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay) : null
    if (match) return Math.round(Number(match[1]) * 1000)
  }
  return undefined
}
