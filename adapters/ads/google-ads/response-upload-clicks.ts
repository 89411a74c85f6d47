/**
 * Pure, legacy path (`api: 'upload-clicks'`): Google's answer to UploadClickConversions → one outcome per conversion, in request order.
 * A 200 may carry `partialFailureError` (google.rpc.Status whose details hold a GoogleAdsFailure); each error's
 * `location.fieldPathElements` names the row (`{fieldName: "conversions", index: N}`), and the row's entry in
 * `results` is an empty object. Any other status is the standard Google error model: `{error: {code, message,
 * status, details}}`.
 */
import type { ConversionEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { bodySnippet, isObject, isRetryableStatus, parseJson, retry, retryAfterMs } from '../../shared/helpers.ts'

interface GoogleAdsError {
  errorCode?: Record<string, string>
  message?: string
  location?: { fieldPathElements?: { fieldName?: string, index?: number }[] }
  details?: { quotaErrorDetails?: { retryDelay?: string } }
}
interface StatusDetail { '@type'?: string, errors?: GoogleAdsError[], retryDelay?: string, reason?: string }
interface RpcStatus { code?: number, message?: string, status?: string, details?: StatusDetail[] }

/** How one Google Ads upload method's rows are read: the list field that locates a row, and which row errors mean what. */
export interface UploadRules {
  /** The request's list field, as `location.fieldPathElements` names it (`conversions`, `conversion_adjustments`). */
  rows: string[]
  /** Row errors that mean "already recorded" or "nothing to attribute" rather than a failure. */
  alreadyDone: ReadonlySet<string>
  /** Row errors worth another try later, with the wait. */
  later: ReadonlyMap<string, number>
}

/** Row errors that mean "already recorded" or "nothing to attribute" rather than a failure. */
const ALREADY_DONE = new Set([
  'conversionUploadError.ORDER_ID_ALREADY_IN_USE', // a retry of an upload Google recorded (our orderId is the dedup key)
  'conversionUploadError.CLICK_CONVERSION_ALREADY_EXISTS',
  'conversionUploadError.CLICK_NOT_FOUND', // enhanced conversions for leads: not from a Google ad; Google says to ignore it
])
/** Row errors Google asks to retry later: the click or the action is under 6 hours old. */
const SIX_HOURS_MS = 6 * 3_600_000
const TOO_EARLY = new Map([['conversionUploadError.TOO_RECENT_EVENT', SIX_HOURS_MS], ['conversionUploadError.TOO_RECENT_CONVERSION_ACTION', SIX_HOURS_MS]])
const CLICK_UPLOADS: UploadRules = { rows: ['conversions'], alreadyDone: ALREADY_DONE, later: TOO_EARLY }

export function parseUploadResponse(response: PlatformResponse, events: readonly ConversionEvent[]): DeliveryOutcome[] {
  return parseUploadAnswer(response, events.length, CLICK_UPLOADS)
}

/** Any Google Ads upload method with partial failure: one outcome per row of the request, in order. */
export function parseUploadAnswer(response: PlatformResponse, count: number, rules: UploadRules): DeliveryOutcome[] {
  const body = parseJson(response.body)
  if (response.status >= 200 && response.status < 300) {
    if (!isObject(body)) {
      // Google may have recorded the rows: a retry is safe, since orderId makes a second upload a no-op.
      return Array.from({ length: count }, () => ({ status: 'retry', message: `Google Ads answered HTTP ${response.status} with a body that is not JSON` }))
    }
    return fromPartialFailure(body as { results?: unknown[], partialFailureError?: RpcStatus }, count, rules)
  }
  const outcome = fromRequestError(response, body)
  return Array.from({ length: count }, () => outcome)
}

function fromPartialFailure(body: { results?: unknown[], partialFailureError?: RpcStatus }, count: number, rules: UploadRules): DeliveryOutcome[] {
  const failure = body.partialFailureError
  if (!failure || (!failure.code && !failure.details?.length)) return Array.from({ length: count }, () => ({ status: 'sent' }))

  const byRow = new Map<number, GoogleAdsError[]>()
  const unplaced: GoogleAdsError[] = []
  for (const error of adsErrors(failure)) {
    const row = error.location?.fieldPathElements?.find((e) => rules.rows.includes(e.fieldName ?? ''))?.index
    if (typeof row === 'number' && row >= 0 && row < count) byRow.set(row, [...byRow.get(row) ?? [], error])
    else unplaced.push(error)
  }
  if (unplaced.length === 0 && byRow.size === 0) unplaced.push({ message: failure.message ?? 'partial failure without details' })

  return Array.from({ length: count }, (_, row): DeliveryOutcome => {
    const errors = byRow.get(row)
    if (errors) return fromRowErrors(errors, rules)
    // Errors Google did not place on a row belong to the rows without a result (results are absent in validateOnly).
    const result = body.results?.[row]
    const failed = !isObject(result) || Object.keys(result).length === 0
    return unplaced.length && failed ? fromRowErrors(unplaced, rules) : { status: 'sent' }
  })
}

/** Several errors on one row: rejected if any is permanent, else retry if any says so, else sent. */
function fromRowErrors(errors: GoogleAdsError[], rules: UploadRules): DeliveryOutcome {
  const message = errors.map(describe).join('; ')
  const codes = errors.map(codeOf)
  if (codes.every((code) => rules.alreadyDone.has(code))) return { status: 'sent' }
  if (codes.every((code) => rules.later.has(code) || rules.alreadyDone.has(code) || isTransient(code))) {
    const wait = Math.max(0, ...codes.map((code) => rules.later.get(code) ?? 0))
    return { status: 'retry', message, ...(wait > 0 ? { retryAfterMs: wait } : {}) }
  }
  return { status: 'rejected', message }
}

function fromRequestError(response: PlatformResponse, body: unknown): DeliveryOutcome {
  const error = (Array.isArray(body) ? body[0] : body) as { error?: RpcStatus } | undefined
  const status = isObject(error?.error) ? error.error : undefined
  const errors = status ? adsErrors(status) : []
  const excerpt = bodySnippet(response.body)
  const message = status
    ? [`${status.status ?? `HTTP ${response.status}`}: ${status.message ?? 'no message'}`, ...errors.map(describe)].join('; ')
    : `HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`
  const transient = errors.length > 0 && errors.every((e) => isTransient(codeOf(e)))

  if (response.status === 429 || status?.status === 'RESOURCE_EXHAUSTED') {
    return retry(message, retryAfterMs(response.headers) ?? retryDelay(status, errors))
  }
  // Google answers a concurrency conflict (ABORTED) with 409: retried even without Retry-After.
  if (isRetryableStatus(response.status, response.headers) || response.status === 409 || transient) return retry(message, retryAfterMs(response.headers))
  return { status: 'rejected', message }
}

/** Quota, internal and concurrent-modification errors pass; anything else needs a change to the request or account. */
function isTransient(code: string): boolean {
  return code.startsWith('quotaError.') || code.startsWith('internalError.') || code === 'databaseError.CONCURRENT_MODIFICATION'
}

/** GoogleAdsFailure.errors from a google.rpc.Status's details. */
function adsErrors(status: RpcStatus): GoogleAdsError[] {
  return (Array.isArray(status.details) ? status.details : [])
    .filter((d) => isObject(d) && (d['@type'] ?? '').endsWith('.GoogleAdsFailure') && Array.isArray(d.errors))
    .flatMap((d) => d.errors ?? [])
    .filter(isObject)
}

/** `{conversionUploadError: "UNPARSEABLE_GCLID"}` → "conversionUploadError.UNPARSEABLE_GCLID". */
function codeOf(error: GoogleAdsError): string {
  const [kind, value] = Object.entries(error.errorCode ?? {})[0] ?? []
  return kind ? `${kind}.${String(value)}` : 'unknown'
}

function describe(error: GoogleAdsError): string {
  const code = codeOf(error)
  return code === 'unknown' ? error.message ?? 'unknown error' : `${code}: ${error.message ?? ''}`.trim()
}

/** Google's own hint: QuotaErrorDetails.retryDelay on an error, or a google.rpc.RetryInfo detail ("30s", "1.5s"). */
function retryDelay(status: RpcStatus | undefined, errors: GoogleAdsError[]): number | undefined {
  const delays = [
    ...errors.map((e) => e.details?.quotaErrorDetails?.retryDelay),
    ...(status?.details ?? []).filter((d) => d['@type']?.endsWith('google.rpc.RetryInfo')).map((d) => d.retryDelay),
  ]
  for (const delay of delays) {
    const match = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay) : null
    if (match) return Math.round(Number(match[1]) * 1000)
  }
  return undefined
}
