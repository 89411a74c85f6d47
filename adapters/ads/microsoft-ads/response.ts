/**
 * Pure classification of a UET Conversions API answer, one outcome per event in request order. map.ts sends
 * `continueOnValidationError: true`, so Microsoft processes the valid events and answers 200 with the invalid
 * ones listed in `error.details[]` by `index` (warnings carry `isWarning: true` and do not fail the event).
 * A 400 means no event was processed; 401 is a wrong token. Bodies and sources: README.md.
 */
import type { ConversionEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { describeHttp, outcomeByStatus, parseJsonObject } from '../../shared/helpers.ts'

/** One entry of `error.details`; Microsoft lists at most the first 10 errors and warnings. */
export interface UetErrorDetail {
  index?: number
  propertyName?: string
  attemptedValue?: unknown
  errorMessage?: string
  errorCode?: string
  isWarning?: boolean
}

/** Success and error bodies share this shape: `{ eventsReceived?, error?: { code, message, details }, traceId? }`. */
export interface UetAnswer {
  eventsReceived?: number
  error?: { code?: string, message?: string, details?: UetErrorDetail[] }
  traceId?: string
}

const AUTH_HINT = 'Check apiToken and tagId: the token is the Conversions API token of that UET tag (Microsoft Advertising → Tools → UET tag → edit the tag → Use Conversions API → copy the token) and works for no other tag. The Conversions API is in pilot: if the tag has no "Use Conversions API" option, ask your Microsoft account manager to enable it'

export function fromUetResponse(response: PlatformResponse, events: readonly ConversionEvent[]): DeliveryOutcome[] {
  const answer = parseJsonObject(response.body) as UetAnswer | undefined
  if (response.status >= 200 && response.status < 300) return fromProcessed(answer, events.length)
  const outcome = classifyFailure(response, answer)
  const failures = failuresByEvent(answer, events.length)
  if (outcome.status !== 'rejected' || failures.size === 0) return events.map(() => outcome)
  // A validation error processed nothing: each event gets its own errors where Microsoft listed them.
  return events.map((_, index) => {
    const own = failures.get(index)
    return own ? { status: 'rejected', message: `${outcome.message}; ${describeDetails(own)}` } : outcome
  })
}

/** HTTP 2xx: every event processed except those with a (non-warning) error of their own. */
function fromProcessed(answer: UetAnswer | undefined, count: number): DeliveryOutcome[] {
  const failures = failuresByEvent(answer, count)
  const received = answer?.eventsReceived
  // Microsoft lists only 10 errors: when fewer events were processed than the listed errors explain, the
  // others cannot be told apart. Sending them again is safe, since the same eventId is deduplicated.
  const unexplained = typeof received === 'number' && count - failures.size > received
  return Array.from({ length: count }, (_, index): DeliveryOutcome => {
    const own = failures.get(index)
    if (own) return { status: 'rejected', message: `Microsoft UET CAPI refused the event: ${describeDetails(own)}${traceOf(answer)}` }
    if (unexplained) {
      return { status: 'retry', message: `Microsoft UET CAPI processed ${received} of ${count} events and listed errors for ${failures.size}; which others failed is not said, so the event is sent again${traceOf(answer)}` }
    }
    return { status: 'sent' }
  })
}

/** The outcome of a non-2xx answer for the events it carried. */
export function classifyFailure(response: PlatformResponse, answer: UetAnswer | undefined): DeliveryOutcome {
  const { status, headers } = response
  const message = answer?.error ? describeError(status, answer) : describeHttp('Microsoft UET CAPI', status, response.body)
  if (status === 401 || status === 403 || answer?.error?.code === 'Unauthorized') return { status: 'rejected', message: `${message.replace(/\.$/, '')}. ${AUTH_HINT}` }
  return outcomeByStatus(status, headers, message)
}

// --- internal ---

/** Errors (not warnings) that name an event of this request, grouped by its index. */
function failuresByEvent(answer: UetAnswer | undefined, count: number): Map<number, UetErrorDetail[]> {
  const byIndex = new Map<number, UetErrorDetail[]>()
  const details = Array.isArray(answer?.error?.details) ? answer.error.details : []
  for (const detail of details) {
    if (typeof detail !== 'object' || detail === null || detail.isWarning === true) continue
    const index = detail.index
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count) continue
    byIndex.set(index, [...byIndex.get(index) ?? [], detail])
  }
  return byIndex
}

function describeDetails(details: UetErrorDetail[]): string {
  return details.map((d) => {
    const where = d.propertyName ? `${d.propertyName}: ` : ''
    return `${where}${d.errorMessage ?? 'invalid'}${d.errorCode ? ` (${d.errorCode})` : ''}`
  }).join('; ')
}

/** Code, message and trace id, plus the details that name no event (about the request as a whole). */
function describeError(status: number, answer: UetAnswer): string {
  const { code, message, details } = answer.error ?? {}
  const general = (Array.isArray(details) ? details : []).filter((d) => typeof d === 'object' && d !== null && typeof d.index !== 'number')
  const extra = general.length > 0 ? ` (${describeDetails(general)})` : ''
  return `Microsoft UET CAPI ${code ?? 'error'} (HTTP ${status}): ${message ?? 'no message'}${extra}${traceOf(answer)}`
}

function traceOf(answer: UetAnswer | undefined): string {
  return typeof answer?.traceId === 'string' && answer.traceId ? ` [traceId ${answer.traceId}]` : ''
}
