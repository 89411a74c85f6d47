/**
 * Pure: LinkedIn's answer to a BATCH_CREATE of conversion events → one outcome per event, in order.
 * Success is HTTP 200 `{ elements: [{ status: 201 }, ...] }`, one entry per element. Failures use the Rest.li error
 * body `{ status, serviceErrorCode?, code?, message }`; a validation failure (422) fails the whole batch and names the
 * bad rows in its message (`Index: 0, ERROR :: /path :: text`), so those are rejected and the others sent again.
 * Classification table: README.md.
 */
import type { ConversionEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { answeredAt, describeHttp, isRetryableStatus, parseJsonObject, retry, retryAfterMs } from '../../shared/helpers.ts'
import { LINKEDIN_API_VERSION } from './version.ts'

interface RestLiError { status?: number, serviceErrorCode?: number, code?: string, message?: string }
interface BatchElement { status?: number, id?: string, error?: RestLiError }

export function parseConversionEventsResponse(response: PlatformResponse, events: readonly ConversionEvent[]): DeliveryOutcome[] {
  const { status, headers } = response
  const count = events.length
  const body = parseJsonObject(response.body)
  if (status >= 200 && status < 300) {
    // LinkedIn took the request; an element without its own entry counts as created, never re-sent (no CAPI-side dedup is documented).
    const elements = Array.isArray(body?.elements) ? body.elements as BatchElement[] : []
    return Array.from({ length: count }, (_, i) => fromElement(elements[i]))
  }
  const error = body && (typeof body.message === 'string' || typeof body.code === 'string') ? body as RestLiError : undefined
  const message = error ? describe(status, error) : describeHttp('LinkedIn', status, response.body)
  const rows = status === 422 || status === 400 ? failedRows(error?.message ?? '') : undefined
  if (rows && [...rows.keys()].every((row) => row < count)) {
    return Array.from({ length: count }, (_, i) => {
      const text = rows.get(i)
      return text !== undefined
        ? { status: 'rejected', message: `LinkedIn refused this conversion (HTTP ${status}): ${text}${ruleHint(text)}` }
        : { status: 'retry', message: `LinkedIn refused the whole batch (HTTP ${status}) because of other conversions in it; this one was not recorded: ${message}` }
    })
  }
  return Array.from({ length: count }, () => fromRequestError(status, headers, error, message))
}

function fromElement(element: BatchElement | undefined): DeliveryOutcome {
  const status = element?.status ?? element?.error?.status
  if (status === undefined || (status >= 200 && status < 300)) return { status: 'sent' }
  const message = element?.error ? describe(status, element.error) : `LinkedIn answered HTTP ${status} for this conversion`
  return status === 408 || status === 429 || (status >= 500 && status !== 501) ? { status: 'retry', message } : { status: 'rejected', message }
}

function fromRequestError(status: number, headers: Headers, error: RestLiError | undefined, message: string): DeliveryOutcome {
  if (status === 429) return retry(message, retryAfterMs(headers) ?? (/\bDAY limit\b/i.test(error?.message ?? '') ? untilUtcMidnight(headers) : undefined))
  const hint = authHint(status, error?.code)
  if (hint) return { status: 'rejected', message: `${message}. ${hint}` }
  // LinkedIn's CONFLICT says "A write conflict occurred. Retry the request."
  const retryable = isRetryableStatus(status, headers) || (status === 409 && error?.code === 'CONFLICT')
  return retryable ? retry(message, retryAfterMs(headers)) : { status: 'rejected', message }
}

/**
 * Rows a batch-level refusal names: 422 `Index: 0, ERROR :: /a :: text\nERROR :: /b :: text\nIndex: 2, ERROR :: ...`, or
 * 400 `... indices [0, 2] (0-indexed)`. Undefined when the message names none.
 */
function failedRows(message: string): Map<number, string> | undefined {
  const rows = new Map<number, string>()
  const parts = message.split(/Index:\s*(\d+),\s*/)
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const text = parts[i + 1]!.split('\n').map((line) => line.trim()).filter(Boolean).join('; ')
    rows.set(Number(parts[i]), rows.has(Number(parts[i])) ? `${rows.get(Number(parts[i]))}; ${text}` : text)
  }
  const indices = /indices \[([\d,\s]+)\]/.exec(message)?.[1]
  if (rows.size === 0 && indices) for (const index of indices.split(',')) rows.set(Number(index.trim()), message)
  return rows.size > 0 ? rows : undefined
}

function ruleHint(text: string): string {
  return /CONVERSIONS_API/.test(text)
    ? '. The conversion rule must be a Conversions API rule: create it in Campaign Manager with "Conversions API" as its data source'
    : ''
}

/** What the operator must fix for refusals no retry can cure. */
function authHint(status: number, code: string | undefined): string | undefined {
  if (status === 401) {
    return 'The access token is expired, revoked or invalid (LinkedIn access tokens last 60 days): set refreshToken with clientId and clientSecret so dcgate renews it, or generate a new token with the rw_conversions scope and update accessToken'
  }
  if (status === 403) {
    return 'The token lacks the rw_conversions scope, or its member has no role (ACCOUNT_BILLING_ADMIN, ACCOUNT_MANAGER, CAMPAIGN_MANAGER or CREATIVE_MANAGER) on the ad account that owns the conversion rule'
  }
  if (status === 426 || code === 'NONEXISTENT_VERSION' || code === 'VERSION_MISSING') {
    return `LinkedIn no longer serves API version ${LINKEDIN_API_VERSION}: upgrade dcgate (adapters/ads/linkedin/version.ts)`
  }
  return undefined
}

function describe(status: number, error: RestLiError): string {
  const id = [error.code, error.serviceErrorCode === undefined ? undefined : `serviceErrorCode ${error.serviceErrorCode}`].filter(Boolean).join(', ')
  return `LinkedIn${id ? ` ${id}` : ''} (HTTP ${status}): ${error.message?.trim() || 'no message'}`
}

/** LinkedIn's daily limits reset at midnight UTC. */
function untilUtcMidnight(headers: Headers): number {
  const now = answeredAt(headers)
  const midnight = new Date(now)
  midnight.setUTCHours(24, 0, 0, 0)
  return midnight.getTime() - now
}
