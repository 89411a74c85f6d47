/**
 * Pure classification of an X Conversions API answer. X accepts a request only when none of its conversions has an
 * error (then `{ data: { conversions_processed, debug_id } }`), and otherwise lists every error in the Ads API shape
 * `{ errors: [{ code, message, parameter }], request }` without saying which conversion it belongs to. So every sent
 * event gets the same outcome; events map.ts kept out (nothing to match on) are rejected on their own.
 */
import type { ConversionEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { matchProblem } from './map.ts'

export interface XError {
  code?: string
  message?: string
  parameter?: string
  details?: string
}

export function fromXResponse(response: PlatformResponse, events: readonly ConversionEvent[]): DeliveryOutcome[] {
  const outcome = classifyXResponse(response)
  return events.map((event) => {
    const problem = matchProblem(event)
    return problem ? { status: 'rejected', message: `not sent to X: ${problem}` } : outcome
  })
}

/** The outcome of one request for the conversions it carried. */
export function classifyXResponse(response: PlatformResponse): DeliveryOutcome {
  const { status, headers } = response
  if (status >= 200 && status < 300) return { status: 'sent' }
  const errors = readErrors(response.body)
  const message = errors.length > 0 ? describeErrors(status, errors) : describeHttp(status, response.body)
  const codes = errors.map((error) => error.code)
  if (status === 429 || codes.includes('TOO_MANY_REQUESTS')) return retry(message, headers)
  const retryable = status === 408 || status === 423 || (status === 409 && headers.has('retry-after')) || (status >= 500 && status !== 501)
  if (retryable) return retry(message, headers)
  const hint = hintFor(status, errors)
  return { status: 'rejected', message: hint ? `${message}. ${hint}` : message }
}

/**
 * Milliseconds to wait: `Retry-After` (seconds, or an HTTP date), else X's `x-rate-limit-reset` (unix seconds when
 * the window reopens), both measured from the answer's `Date` header when it has one.
 */
export function retryAfterMs(headers: Headers): number | undefined {
  const sent = Date.parse(headers.get('date') ?? '')
  const now = Number.isNaN(sent) ? Date.now() : sent
  const retryAfter = headers.get('retry-after')?.trim()
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter)) return Number(retryAfter) * 1000
    const at = Date.parse(retryAfter)
    if (!Number.isNaN(at)) return Math.max(0, at - now)
  }
  const reset = headers.get('x-rate-limit-reset')?.trim()
  if (reset && /^\d+$/.test(reset)) return Math.max(0, Number(reset) * 1000 - now)
  return undefined
}

// --- internal ---

function retry(message: string, headers: Headers): DeliveryOutcome {
  const after = retryAfterMs(headers)
  return after === undefined ? { status: 'retry', message } : { status: 'retry', message, retryAfterMs: after }
}

function readErrors(body: string): XError[] {
  try {
    const parsed: unknown = JSON.parse(body)
    const errors = (parsed as { errors?: unknown } | null)?.errors
    return Array.isArray(errors) ? errors.filter((error): error is XError => typeof error === 'object' && error !== null) : []
  }
  catch {
    return []
  }
}

/** `X INVALID_PARAMETER (HTTP 400): hashed_email (abc) is not a valid SHA-256 hash [hashed_email]; ...` */
function describeErrors(status: number, errors: XError[]): string {
  const parts = errors.map((error) => {
    const text = [error.message, error.details].filter(Boolean).join(' – ') || 'no message'
    return `${error.code ?? 'error'}: ${text}${error.parameter ? ` [${error.parameter}]` : ''}`
  })
  return `X answered HTTP ${status}: ${parts.join('; ')}`
}

function describeHttp(status: number, body: string): string {
  const text = body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 200)
  return text ? `X answered HTTP ${status}: ${text}` : `X answered HTTP ${status} with an empty body`
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
