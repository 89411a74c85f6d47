/**
 * Pure classification of a Conversions API answer. Meta accepts or refuses a request as a whole (2xx with
 * `events_received`, or a Graph error body), so every event of the request gets the same outcome. Codes and
 * sources: README.md.
 */
import type { ConversionEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { describeHttp, isRetryableStatus, parseJsonObject, retry, retryAfterMs } from '../../shared/helpers.ts'

/** Graph error body: `{ error: { message, type, code, error_subcode, error_user_title, error_user_msg, fbtrace_id, is_transient } }`. */
export interface GraphError {
  message?: string
  type?: string
  code?: number
  error_subcode?: number
  error_user_title?: string
  error_user_msg?: string
  fbtrace_id?: string
  is_transient?: boolean
}

/** Throttling: 4 app, 17 user, 32 page, 341 application limit, 613 rate limit on this call. */
const THROTTLED = new Set([4, 17, 32, 341, 613])
/**
 * Business Use Case rate limits (a system user's token is counted per business and use case): 80000 Ads Insights,
 * 80001 Pages, 80002 Instagram, 80003 Custom Audience, 80004 Ads Management, 80005 LeadGen, 80006 Messenger,
 * 80008 WhatsApp, 80009 Catalog Management, 80014 Catalog Batch; the range in between is reserved for more of them.
 */
const isBusinessUseCaseLimit = (code: number) => code >= 80000 && code <= 80014
/** Temporary: 1 unknown, 2 service, 368 temporarily blocked (wait and retry). */
const TRANSIENT = new Set([1, 2, 368])

export function fromMetaResponse(response: PlatformResponse, events: readonly ConversionEvent[]): DeliveryOutcome[] {
  const outcome = classifyMetaResponse(response)
  return events.map(() => outcome)
}

/** The outcome of one request for the events it carried. */
export function classifyMetaResponse(response: PlatformResponse): DeliveryOutcome {
  const { status, headers } = response
  if (status >= 200 && status < 300) return { status: 'sent' }
  const error = readGraphError(response.body)
  const message = error ? describeGraphError(status, error) : describeHttp('Meta', status, response.body)
  const code = error?.code
  if (status === 429 || (code !== undefined && (THROTTLED.has(code) || isBusinessUseCaseLimit(code)))) return retry(message, metaRetryAfterMs(headers))
  if (error?.is_transient === true || (code !== undefined && TRANSIENT.has(code))) return retry(message, metaRetryAfterMs(headers))
  if (code !== undefined) {
    const hint = authHint(code)
    if (hint) return { status: 'rejected', message: `${message}. ${hint}` }
  }
  return isRetryableStatus(status, headers) ? retry(message, metaRetryAfterMs(headers)) : { status: 'rejected', message }
}

/**
 * Milliseconds to wait: `Retry-After` (seconds, or an HTTP date measured from the response's `Date`), else
 * the largest `estimated_time_to_regain_access` (minutes) in Meta's `X-Business-Use-Case-Usage` header.
 */
export function metaRetryAfterMs(headers: Headers): number | undefined {
  const after = retryAfterMs(headers)
  if (after !== undefined) return after
  const minutes = regainAccessMinutes(headers.get('x-business-use-case-usage'))
  return minutes > 0 ? minutes * 60_000 : undefined
}

// --- internal ---

function readGraphError(body: string): GraphError | undefined {
  const error = parseJsonObject(body)?.error
  return typeof error === 'object' && error !== null ? error as GraphError : undefined
}

function describeGraphError(status: number, error: GraphError): string {
  const id = [error.code, error.error_subcode].filter((part) => part !== undefined).join('/')
  const head = `Meta ${error.type ?? 'error'}${id ? ` ${id}` : ''} (HTTP ${status})`
  const user = [error.error_user_title, error.error_user_msg].filter(Boolean).join(': ')
  const text = [error.message, user].filter(Boolean).join(' – ') || 'no message'
  return `${head}: ${text}${error.fbtrace_id ? ` [fbtrace_id ${error.fbtrace_id}]` : ''}`
}

/** What the operator must fix for errors no retry can cure: the token (102, 190) or its permissions (10, 200-299). */
function authHint(code: number): string | undefined {
  if (code === 190 || code === 102) {
    return 'The access token is invalid, expired or revoked: generate a new system-user token and update accessToken in the meta destination'
  }
  if (code === 10 || (code >= 200 && code <= 299)) {
    return 'The token lacks permission: give its system user access to the pixel (dataset) and the ads_management permission'
  }
  return undefined
}

function regainAccessMinutes(header: string | null): number {
  if (!header) return 0
  try {
    const usage = JSON.parse(header) as Record<string, { estimated_time_to_regain_access?: unknown }[]>
    const minutes = Object.values(usage).flat().map((entry) => Number(entry?.estimated_time_to_regain_access ?? 0))
    return Math.max(0, ...minutes.filter(Number.isFinite))
  }
  catch {
    return 0
  }
}
