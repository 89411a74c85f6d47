/**
 * Pure: Google's delayed diagnostics. `events:ingest` answers `{requestId}` once a request passes its checks, then
 * processes the events; `GET /v1/requestStatus:retrieve?requestId=…` tells, per destination of that request (in the
 * request's order), `PROCESSING`, `SUCCESS`, `PARTIAL_SUCCESS` or `FAILED`, with error counts per
 * ProcessingErrorReason and the count of events. Google asks to wait 30 minutes, then to look again with exponential
 * backoff until every destination is final (README "Delayed diagnostics"). A destination here is one conversion action,
 * so an event's verdict is its action's: all its events failed, it failed; some failed, Google does not say which.
 */
import type { ConversionEvent, Diagnosis, PlatformRequest, PlatformResponse } from '../../../core/delivery/types.ts'
import type { DiagnosticsSupport } from '../../../core/registry.ts'
import { isObject, parseJson } from '../../shared/helpers.ts'
import { authorizeGoogleAds } from './auth.ts'
import type { GoogleAdsOptions } from './index.ts'
import { actionFor } from './map.ts'
import { processingReason } from './processing-errors.ts'
import { parseIngestResponse } from './response.ts'
import { DATA_MANAGER_VERSION } from './version.ts'

interface ErrorCount { recordCount?: string, reason?: string }
interface DestinationStatus {
  destination?: { reference?: string, productDestinationId?: string }
  requestStatus?: string
  errorInfo?: { errorCounts?: ErrorCount[] }
  warningInfo?: { warningCounts?: ErrorCount[] }
  eventsIngestionStatus?: { recordCount?: string }
}

export const googleDiagnostics: DiagnosticsSupport<GoogleAdsOptions> = {
  // "Wait for 30 minutes, then send a RetrieveRequestStatus request for each successful request_id."
  firstCheckAfterMs: 30 * 60_000,
  // Looks at 30 min, 1 h, 2 h … 64 h: about eight calls per request, then the report says no final answer came.
  giveUpAfterMs: 72 * 3_600_000,
  receiptOf: (response) => {
    const body = parseJson(response.body)
    return isObject(body) && typeof body.requestId === 'string' && body.requestId ? body.requestId : undefined
  },
  // The Data Manager scope, as for events:ingest; only that API answers with a requestId.
  authorize: (options, ctx) => authorizeGoogleAds({ ...options, api: 'data-manager' }, ctx),
  toRequest: (receipt, options): PlatformRequest => ({
    url: `${options.baseUrl}/${DATA_MANAGER_VERSION}/requestStatus:retrieve?requestId=${encodeURIComponent(receipt)}`,
    method: 'GET',
    headers: {},
    body: '',
  }),
  parseResponse: parseRequestStatus,
}

export function parseRequestStatus(response: PlatformResponse, events: readonly ConversionEvent[], options: GoogleAdsOptions): Diagnosis[] {
  if (response.status < 200 || response.status >= 300) {
    // The call's own failure: read as the ingest answers are (google.rpc.Status); a refusal is final, the rest retried.
    const outcome = parseIngestResponse(response, [events[0]!])[0]!
    const diagnosis: Diagnosis = outcome.status === 'retry'
      ? { status: 'retry', message: `could not read Google's diagnostics: ${outcome.message}`, ...(outcome.retryAfterMs ? { retryAfterMs: outcome.retryAfterMs } : {}) }
      : { status: 'done', note: `Google's diagnostics could not be read: ${'message' in outcome ? outcome.message : 'no answer'}` }
    return events.map(() => diagnosis)
  }
  const body = parseJson(response.body)
  const statuses = isObject(body) && Array.isArray(body.requestStatusPerDestination) ? body.requestStatusPerDestination.filter(isObject) as DestinationStatus[] : []
  return events.map((event) => {
    const action = actionFor(event, options)
    const status = statuses.find((s) => s.destination?.productDestinationId === action) ?? (statuses.length === 1 ? statuses[0] : undefined)
    return status ? diagnose(status, action) : { status: 'done', note: `Google's request status names no destination for conversion action ${action}` }
  })
}

function diagnose(status: DestinationStatus, action: string | undefined): Diagnosis {
  const total = Number(status.eventsIngestionStatus?.recordCount ?? 0)
  const errors = countsOf(status.errorInfo?.errorCounts)
  const failedCount = (status.errorInfo?.errorCounts ?? []).reduce((sum, e) => sum + Number(e.recordCount ?? 0), 0)
  const warnings = countsOf(status.warningInfo?.warningCounts)
  const of = `conversion action ${action}, ${total} event${total === 1 ? '' : 's'} in the request`
  const warned = warnings ? `; warnings: ${warnings}` : ''
  switch (status.requestStatus) {
    case 'SUCCESS':
      return { status: 'done', note: `Google processed the request: SUCCESS (${of})${warned}` }
    // The diagnostics guide spells it FAILURE; request_status_per_destination.proto, which the JSON follows, FAILED.
    case 'FAILED':
    case 'FAILURE':
      return { status: 'failed', message: `Google rejected the event after accepting the request: ${status.requestStatus} (${of})${errors ? `: ${errors}` : ''}${warned}` }
    case 'PARTIAL_SUCCESS':
      return { status: 'done', note: `Google processed the request: PARTIAL_SUCCESS (${of}): ${failedCount} failed${errors ? `: ${errors}` : ''}; Google does not say which events, so this one stays sent${warned}` }
    default:
      // PROCESSING, or REQUEST_STATUS_UNKNOWN: not final yet.
      return { status: 'processing' }
  }
}

/** "PROCESSING_ERROR_REASON_INVALID_GCLID ×2 (The google click ID could not be decoded.)", joined. */
function countsOf(counts: ErrorCount[] | undefined): string {
  return (Array.isArray(counts) ? counts.filter(isObject) : []).map((c) => {
    const reason = String(c.reason ?? 'UNSPECIFIED')
    const words = processingReason(reason)
    return `${reason} ×${c.recordCount ?? '?'}${words ? ` (${words})` : ''}`
  }).join('; ')
}
