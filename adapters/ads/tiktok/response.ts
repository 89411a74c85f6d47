/**
 * Pure classification of an Events API 2.0 answer. TikTok usually answers HTTP 200 and puts the verdict in the
 * body's `code` (`{ code, message, request_id, data }`; 0 is success), and it accepts or refuses a request as a
 * whole, so every event of the request gets the same outcome. Codes and sources: README.md.
 */
import type { ConversionEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'

/** TikTok's business-API envelope. */
export interface TikTokEnvelope {
  code: number
  message?: string
  request_id?: string
  data?: unknown
}

/** 0 OK; 20001 partial success, which TikTok does not break down per event. */
const ACCEPTED = new Set([0, 20001])
/** 40100: too many requests (QPS/QPM/QPD limit of the token or the API). */
const THROTTLED = 40100
/** 40102 token expired, 40104 token empty, 40105 token incorrect or revoked. */
const BAD_TOKEN = new Set([40102, 40104, 40105])
/** 40001: the token has no permission for this pixel. */
const NO_PERMISSION = 40001
/** 5xxxx: TikTok's system errors and "system busy". */
const SYSTEM_ERROR_FROM = 50000

export function fromTrackResponse(response: PlatformResponse, events: readonly ConversionEvent[]): DeliveryOutcome[] {
  const outcome = classifyTrackResponse(response)
  return events.map(() => outcome)
}

/** The outcome of one request for all the events it carried. */
export function classifyTrackResponse(response: PlatformResponse): DeliveryOutcome {
  const { status, headers } = response
  const ok = status >= 200 && status < 300
  const envelope = readEnvelope(response.body)
  if (!envelope) {
    // A 2xx without TikTok's envelope (a proxy page) proves nothing; a retry is harmless because event_id dedups.
    if (ok) return retry(`TikTok answered HTTP ${status} without its {code, message} body${snippet(response.body)}; sending again`, headers)
    return fromHttpStatus(status, headers, `TikTok answered HTTP ${status}${snippet(response.body) || ' with an empty body'}`)
  }
  if (ok && ACCEPTED.has(envelope.code)) return { status: 'sent' }

  const message = describe(status, envelope)
  if (status === 429 || envelope.code === THROTTLED) return retry(message, headers)
  if (envelope.code >= SYSTEM_ERROR_FROM) return retry(message, headers)
  if (BAD_TOKEN.has(envelope.code)) {
    return { status: 'rejected', message: `${message}. The Events API access token is invalid, expired or revoked: generate a new one in Events Manager → the pixel → Settings → Events API → Generate Access Token, and update accessToken in the tiktok destination` }
  }
  if (envelope.code === NO_PERMISSION) {
    return { status: 'rejected', message: `${message}. The access token may not send events to this pixel: check pixelCode, and use a token generated in that pixel's own settings` }
  }
  return fromHttpStatus(status, headers, message)
}

/** Milliseconds to wait from `Retry-After`: seconds, or an HTTP date measured from the response's `Date`. */
export function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim()
  if (!value) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000)
  const at = Date.parse(value)
  if (Number.isNaN(at)) return undefined
  const sent = Date.parse(headers.get('date') ?? '')
  return Math.max(0, at - (Number.isNaN(sent) ? Date.now() : sent))
}

// --- internal ---

/** 429, 408, 423, 409 with Retry-After and 5xx except 501 retry; anything else is permanent. */
function fromHttpStatus(status: number, headers: Headers, message: string): DeliveryOutcome {
  const retryable = status === 429 || status === 408 || status === 423
    || (status === 409 && headers.has('retry-after'))
    || (status >= 500 && status !== 501)
  return retryable ? retry(message, headers) : { status: 'rejected', message }
}

function retry(message: string, headers: Headers): DeliveryOutcome {
  const after = retryAfterMs(headers)
  return after === undefined ? { status: 'retry', message } : { status: 'retry', message, retryAfterMs: after }
}

function readEnvelope(body: string): TikTokEnvelope | undefined {
  try {
    const parsed: unknown = JSON.parse(body)
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
    const code = (parsed as { code?: unknown }).code
    return typeof code === 'number' && Number.isInteger(code) ? parsed as TikTokEnvelope : undefined
  }
  catch {
    return undefined
  }
}

function describe(status: number, envelope: TikTokEnvelope): string {
  const text = typeof envelope.message === 'string' && envelope.message ? envelope.message : 'no message'
  const id = typeof envelope.request_id === 'string' && envelope.request_id ? ` [request_id ${envelope.request_id}]` : ''
  return `TikTok code ${envelope.code} (HTTP ${status}): ${text}${id}`
}

function snippet(body: string): string {
  const text = body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 200)
  return text ? `: ${text}` : ''
}
