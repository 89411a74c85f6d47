/**
 * Pure: Microsoft's answer to ApplyOnlineConversionAdjustments → one outcome per refund, in request order. A 200
 * lists the refused items in `PartialErrors` (BatchError: Code, ErrorCode, Index, Message); the others were applied.
 * A fault (AdApiFaultDetail `Errors`, ApiFaultDetail `BatchErrors` / `OperationErrors`) applied nothing. README "Refunds".
 */
import type { AdjustmentEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { describeHttp, isObject, outcomeByStatus, parseJsonObject, retry, retryAfterMs } from '../../shared/helpers.ts'

export interface BatchError { Code?: number, ErrorCode?: string, Index?: number, Message?: string, FieldPath?: string }

const LABEL = 'Microsoft Advertising'
/** 105 InvalidCredentials, 106 UserIsNotAuthorized: the operator's credentials, not the refund. */
const AUTH_CODES = new Set([105, 106])
/** 117 CallRateExceeded: "resubmit the request after one minute" (Handling Service Errors and Exceptions). */
const RATE_CODE = 117
const RATE_WAIT_MS = 60_000
const AUTH_HINT = 'check adjustments.developerToken, adjustments.customerId and adjustments.accountId, and that the user who made the refresh token can manage that account'

export function parseOnlineAdjustmentsResponse(response: PlatformResponse, items: readonly AdjustmentEvent[]): DeliveryOutcome[] {
  const answer = parseJsonObject(response.body)
  if (response.status >= 200 && response.status < 300 && answer) return fromApplied(answer, items.length)
  const errors = [...listOf(answer?.Errors), ...listOf(answer?.OperationErrors), ...listOf(answer?.BatchErrors)]
  const codes = new Set(errors.map((error) => error.Code))
  const tracking = typeof answer?.TrackingId === 'string' ? ` (TrackingId ${answer.TrackingId})` : ''
  const summary = errors.length > 0 ? `${LABEL} refused the call: ${errors.map(describe).join('; ')}${tracking}` : describeHttp(LABEL, response.status, response.body)
  if (codes.has(RATE_CODE) || response.status === 429) return items.map(() => retry(summary, retryAfterMs(response.headers) ?? RATE_WAIT_MS))
  if (response.status === 401 || response.status === 403 || [...codes].some((code) => AUTH_CODES.has(code!))) {
    return items.map(() => ({ status: 'rejected', message: `${summary} (${AUTH_HINT})` }))
  }
  const outcome = outcomeByStatus(response.status, response.headers, summary)
  const own = byIndex(listOf(answer?.BatchErrors), items.length)
  if (outcome.status !== 'rejected' || own.size === 0) return items.map(() => outcome)
  // A batch fault applied nothing: the items it names are refused, the others go again.
  return items.map((_, index) => {
    const mine = own.get(index)
    return mine ? { status: 'rejected', message: `${LABEL} refused the adjustment: ${mine.map(describe).join('; ')}` } : retry(`not applied: ${summary}`, undefined)
  })
}

/** HTTP 2xx: every item applied except those PartialErrors names by Index. */
function fromApplied(answer: Record<string, any>, count: number): DeliveryOutcome[] {
  const refused = byIndex(listOf(answer.PartialErrors), count)
  return Array.from({ length: count }, (_, index): DeliveryOutcome => {
    const mine = refused.get(index)
    return mine ? { status: 'rejected', message: `${LABEL} refused the adjustment: ${mine.map(describe).join('; ')}` } : { status: 'sent' }
  })
}

function listOf(value: unknown): BatchError[] {
  return Array.isArray(value) ? value.filter(isObject) as BatchError[] : []
}

/** Errors by the request index they name; one outside the request is ignored rather than trusted. */
function byIndex(errors: readonly BatchError[], count: number): Map<number, BatchError[]> {
  const map = new Map<number, BatchError[]>()
  for (const error of errors) {
    if (!Number.isInteger(error.Index) || error.Index! < 0 || error.Index! >= count) continue
    map.set(error.Index!, [...(map.get(error.Index!) ?? []), error])
  }
  return map
}

function describe(error: BatchError): string {
  const code = [typeof error.ErrorCode === 'string' ? error.ErrorCode : undefined, typeof error.Code === 'number' ? `code ${error.Code}` : undefined].filter(Boolean).join(', ')
  const message = typeof error.Message === 'string' ? error.Message.slice(0, 300) : 'no message'
  return code ? `${code}: ${message}` : message
}
