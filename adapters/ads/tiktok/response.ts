/**
 * Pure classification of an Events API 2.0 answer. TikTok usually answers HTTP 200 and puts the verdict in the
 * body's `code` (`{ code, message, request_id, data }`; 0 is success), and it accepts or refuses a request as a
 * whole: every event gets the request's outcome, except that a parameter error (40002) naming some events (`data[3]`)
 * rejects those and retries the rest. Codes and sources: README.md.
 */
import type { ConversionEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { bodySnippet, describeHttp, outcomeByStatus, parseJsonObject, retry, retryAfterMs } from '../../shared/helpers.ts'

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
/** 40002: invalid parameters; TikTok refuses the whole request and its message may name the event, `data[3]`. */
const INVALID_PARAMETERS = 40002
/** 40001: the token has no permission for this pixel. */
const NO_PERMISSION = 40001
/** 5xxxx: TikTok's system errors and "system busy". */
const SYSTEM_ERROR_FROM = 50000

export function fromTrackResponse(response: PlatformResponse, events: readonly ConversionEvent[]): DeliveryOutcome[] {
  const outcome = classifyTrackResponse(response)
  if (outcome.status === 'rejected' && events.length > 1) {
    const named = namedEvents(response.body, events.length)
    // TikTok refused the whole request for the events it names; the others were refused only for their company.
    if (named.size > 0) {
      return events.map((_, index) => named.has(index)
        ? outcome
        : { status: 'retry', message: `not processed: TikTok refused the whole request because of other events in it (${outcome.message})` })
    }
  }
  return events.map(() => outcome)
}

/** The outcome of one request for all the events it carried. */
export function classifyTrackResponse(response: PlatformResponse): DeliveryOutcome {
  const { status, headers } = response
  const ok = status >= 200 && status < 300
  const envelope = readEnvelope(response.body)
  if (!envelope) {
    // A 2xx without TikTok's envelope (a proxy page) proves nothing; a retry is harmless because event_id dedups.
    if (ok) {
      const excerpt = bodySnippet(response.body)
      return retry(`TikTok answered HTTP ${status} without its {code, message} body${excerpt ? `: ${excerpt}` : ''}; sending again`, retryAfterMs(headers))
    }
    return outcomeByStatus(status, headers, describeHttp('TikTok', status, response.body))
  }
  if (ok && ACCEPTED.has(envelope.code)) return { status: 'sent' }

  const message = describe(status, envelope)
  if (status === 429 || envelope.code === THROTTLED) return retry(message, retryAfterMs(headers))
  if (envelope.code >= SYSTEM_ERROR_FROM) return retry(message, retryAfterMs(headers))
  if (BAD_TOKEN.has(envelope.code)) {
    return { status: 'rejected', message: `${message}. The Events API access token is invalid, expired or revoked: generate a new one in Events Manager → the pixel → Settings → Events API → Generate Access Token, and update accessToken in the tiktok destination` }
  }
  if (envelope.code === NO_PERMISSION) {
    return { status: 'rejected', message: `${message}. The access token may not send events to this pixel: check pixelCode, and use a token generated in that pixel's own settings` }
  }
  return outcomeByStatus(status, headers, message)
}

// --- internal ---

function readEnvelope(body: string): TikTokEnvelope | undefined {
  const parsed = parseJsonObject(body)
  const code = parsed?.code
  return typeof code === 'number' && Number.isInteger(code) ? parsed as TikTokEnvelope : undefined
}

/** The events a parameter error names (`data[3]`, `data.3`), by index; none when it names no event or is another error. */
function namedEvents(body: string, count: number): Set<number> {
  const envelope = readEnvelope(body)
  const named = new Set<number>()
  if (envelope?.code !== INVALID_PARAMETERS || typeof envelope.message !== 'string') return named
  for (const match of envelope.message.matchAll(/\bdata(?:\[(\d+)\]|\.(\d+)\b)/g)) {
    const index = Number(match[1] ?? match[2])
    if (index < count) named.add(index)
  }
  return named
}

function describe(status: number, envelope: TikTokEnvelope): string {
  const text = typeof envelope.message === 'string' && envelope.message ? envelope.message : 'no message'
  const id = typeof envelope.request_id === 'string' && envelope.request_id ? ` [request_id ${envelope.request_id}]` : ''
  return `TikTok code ${envelope.code} (HTTP ${status}): ${text}${id}`
}
