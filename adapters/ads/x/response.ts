/**
 * Pure classification of an X Conversions API answer. X accepts a request only when none of its conversions has an
 * error (then `{ data: { conversions_processed, debug_id } }`), and otherwise lists every error in the Ads API shape
 * `{ errors: [{ code, message, parameter }], request }` without saying which conversion it belongs to. Every event
 * of the request gets the same outcome, except when the errors of a 400 quote values of some of its conversions only:
 * those are rejected and the others, which X did not record, retried.
 */
import type { ConversionEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { answeredAt, describeHttp, isRetryableStatus, parseJsonObject, retry, retryAfterMs } from '../../shared/helpers.ts'

export interface XError {
  code?: string
  message?: string
  parameter?: string
  details?: string
}

export function fromXResponse(response: PlatformResponse, events: readonly ConversionEvent[]): DeliveryOutcome[] {
  const outcome = classifyXResponse(response)
  if (outcome.status !== 'rejected' || response.status !== 400) return events.map(() => outcome)
  const named = namedConversions(readErrors(response.body), events)
  if (!named) return events.map(() => outcome)
  // X recorded none of the request: the conversions its errors name are refused, the others go again without them.
  return events.map((_, index): DeliveryOutcome => {
    const own = named.get(index)
    return own
      ? { status: 'rejected', message: describeErrors(400, own) }
      : { status: 'retry', message: `X refused the whole request because of other conversions in it; this one was not recorded: ${outcome.message}` }
  })
}

/** The outcome of one request for the conversions it carried. */
export function classifyXResponse(response: PlatformResponse): DeliveryOutcome {
  const { status, headers } = response
  if (status >= 200 && status < 300) return { status: 'sent' }
  const errors = readErrors(response.body)
  const message = errors.length > 0 ? describeErrors(status, errors) : describeHttp('X', status, response.body)
  const codes = errors.map((error) => error.code)
  if (codes.includes('TOO_MANY_REQUESTS') || isRetryableStatus(status, headers)) return retry(message, xRetryAfterMs(headers))
  const hint = hintFor(status, errors)
  return { status: 'rejected', message: hint ? `${message}. ${hint}` : message }
}

/**
 * Milliseconds to wait: `Retry-After` (seconds, or an HTTP date), else X's `x-rate-limit-reset` (unix seconds when
 * the window reopens), both measured from the answer's `Date` header when it has one.
 */
export function xRetryAfterMs(headers: Headers): number | undefined {
  const after = retryAfterMs(headers)
  if (after !== undefined) return after
  const reset = headers.get('x-rate-limit-reset')?.trim()
  return reset && /^\d+$/.test(reset) ? Math.max(0, Number(reset) * 1000 - answeredAt(headers)) : undefined
}

// --- internal ---

/**
 * Which conversions X's errors name, by the values they quote (`hashed_email (abc) is not …`, `got "…" for
 * conversion_time`): X lists errors without saying whose they are. Undefined when an error names no conversion of
 * the request, or names them all, since the request's outcome then holds for every conversion.
 */
function namedConversions(errors: XError[], events: readonly ConversionEvent[]): Map<number, XError[]> | undefined {
  if (errors.length === 0 || events.length < 2) return undefined
  const values = events.map(ownValues)
  const byEvent = new Map<number, XError[]>()
  for (const error of errors) {
    const quoted = [...(error.message ?? '').matchAll(/\(([^()]+)\)|"([^"]+)"/g)].map((match) => match[1] ?? match[2]!)
    const hits = values.flatMap((own, index) => quoted.some((value) => own.has(value)) ? [index] : [])
    if (hits.length === 0 || hits.length === events.length) return undefined
    for (const index of hits) byEvent.set(index, [...byEvent.get(index) ?? [], error])
  }
  return byEvent
}

/** The values of a conversion X may quote back: its time as sent, its hashed email and phone, its click id. */
function ownValues(event: ConversionEvent): Set<string> {
  const values = [event.occurredAt.toISOString(), event.identity.email, event.identity.phoneE164, event.clickIds.twclid?.trim()]
  return new Set(values.filter((value): value is string => Boolean(value)))
}

function readErrors(body: string): XError[] {
  const errors = parseJsonObject(body)?.errors
  return Array.isArray(errors) ? errors.filter((error): error is XError => typeof error === 'object' && error !== null) : []
}

/** `X INVALID_PARAMETER (HTTP 400): hashed_email (abc) is not a valid SHA-256 hash [hashed_email]; ...` */
function describeErrors(status: number, errors: XError[]): string {
  const parts = errors.map((error) => {
    const text = [error.message, error.details].filter(Boolean).join(' – ') || 'no message'
    return `${error.code ?? 'error'}: ${text}${error.parameter ? ` [${error.parameter}]` : ''}`
  })
  return `X answered HTTP ${status}: ${parts.join('; ')}`
}

/** What the operator must fix for answers no retry can cure. */
function hintFor(status: number, errors: XError[]): string | undefined {
  const codes = new Set(errors.map((error) => error.code))
  const text = errors.map((error) => error.message ?? '').join(' ')
  if (status === 401 || codes.has('UNAUTHORIZED_ACCESS')) {
    return 'The OAuth 1.0a signature was refused: check consumerKey/consumerSecret (the app\'s API key and secret) and accessToken/accessTokenSecret in the x destination (regenerating either in the developer portal voids the old one), and that this server\'s clock is right'
  }
  if (codes.has('UNAUTHORIZED_CLIENT_APPLICATION')) {
    return 'The X app has no Ads API access: apply with the Ads API access form for the app whose consumerKey is configured'
  }
  if (/does not have access to account/i.test(text)) {
    return 'The access token\'s user cannot reach the ad account that owns pixelId: give that handle AD_MANAGER or ACCOUNT_ADMIN on the account, or use a token of a handle that has it'
  }
  if (/event_id/i.test(text) || errors.some((error) => error.parameter === 'event_id')) {
    return 'Check the events mapping (and testEventId) in the x destination: each id must be an event of this pixel, created in Events Manager with "Install with Conversion API"'
  }
  return undefined
}
