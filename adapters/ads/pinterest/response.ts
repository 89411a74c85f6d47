/**
 * Pure classification of a Conversions API answer. Pinterest reports per event, in request order: a 200
 * `{ num_events_received, num_events_processed, events: [{ status, error_message, warning_message }] }`, or a 422
 * whose `details` holds the same object when not every event was processed. Other answers are `{ code, message }`
 * for the whole request. Sources: README.md.
 */
import type { ConversionEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { describeHttp, isObject, outcomeByStatus, parseJsonObject, retry, retryAfterMs } from '../../shared/helpers.ts'

/** Pinterest's error body: `{ code, message }`; a 422 adds `details` with the per-event results. */
interface PinterestError { code?: number, message?: string, details?: EventsResult }
interface EventsResult { num_events_received?: number, num_events_processed?: number, events?: EventResult[] }
interface EventResult { status?: string, error_message?: string | null, warning_message?: string | null }

/** Pinterest's rate-limit code (HTTP 429, "You have exceeded your rate limit"). */
const RATE_LIMITED = 8

const TOKEN_HINT = 'The conversion access token is invalid or revoked: generate a new one in Ads Manager → Conversions → Conversions API (Set up API → Generate new token) and update accessToken in the pinterest destination'
const ACCESS_HINT = 'The token\'s user has no access to this ad account: check adAccountId, and give the user the Owner, Admin, Analyst, Audience or Campaign role on it in Business Access'

export function fromPinterestResponse(response: PlatformResponse, events: readonly ConversionEvent[]): DeliveryOutcome[] {
  return classifyPinterestResponse(response, events.length)
}

/** One outcome for each of the `count` events the request carried, in order. */
export function classifyPinterestResponse(response: PlatformResponse, count: number): DeliveryOutcome[] {
  const { status, headers } = response
  const body = parseJsonObject(response.body)
  const all = (outcome: DeliveryOutcome) => Array.from({ length: count }, () => outcome)

  if (status >= 200 && status < 300) return perEvent((body ?? {}) as EventsResult, count, { status: 'sent' }, '')
  const error = body as PinterestError | undefined
  const message = error?.message !== undefined || error?.code !== undefined ? describeError(status, error) : describeHttp('Pinterest', status, response.body)
  if (status === 422 && isObject(error?.details)) return perEvent(error.details, count, { status: 'rejected', message }, `${message} – `)
  if (status === 429 || error?.code === RATE_LIMITED) return all(retry(message, retryAfterMs(headers)))
  if (status === 401) return all({ status: 'rejected', message: withHint(message, TOKEN_HINT) })
  if (status === 403) return all({ status: 'rejected', message: withHint(message, ACCESS_HINT) })
  return all(outcomeByStatus(status, headers, message))
}

// --- internal ---

/**
 * `events[i]` is the result of the i-th event sent: `processed` → sent, `failed` → rejected with Pinterest's
 * error_message (Pinterest documents no transient per-event failure). An event without a result gets `fallback`.
 */
function perEvent(result: EventsResult, count: number, fallback: DeliveryOutcome, prefix: string): DeliveryOutcome[] {
  const results = Array.isArray(result.events) ? result.events : []
  return Array.from({ length: count }, (_, index): DeliveryOutcome => {
    const entry = results[index]
    if (!isObject(entry)) return fallback
    if (entry.status === 'processed') return { status: 'sent' }
    if (entry.status === 'failed') {
      const reason = [entry.error_message, entry.warning_message].filter(Boolean).join('; ') || 'no error message'
      return { status: 'rejected', message: `${prefix}Pinterest did not process the event: ${reason}` }
    }
    return fallback
  })
}

/** Pinterest's sentence, closed with one full stop, then what the operator must fix. */
function withHint(message: string, hint: string): string {
  return `${message.replace(/\.?$/, '.')} ${hint}`
}

function describeError(status: number, error: PinterestError): string {
  const code = error.code === undefined ? '' : ` code ${error.code}`
  return `Pinterest${code} (HTTP ${status}): ${error.message ?? 'no message'}`
}
