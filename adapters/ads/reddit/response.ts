/**
 * Pure classification of a Conversions API v3 answer. Reddit processes a request whole: 200 `{ data: { message } }`
 * means every event was taken; a 400 "There were N invalid conversion events. None were processed." names the bad
 * events in `error.fields[].field` (`$.data.events[3].event_at`), so those are rejected and the others, refused only
 * for their company, are retried.
 */
import type { ConversionEvent, DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { bodySnippet, isObject, outcomeByStatus, parseJsonObject, retry, retryAfterMs } from '../../shared/helpers.ts'

/**
 * What Reddit says went wrong. v3 answers `{ error: { code, message, fields?: [{ field, message }] } }`; its auth
 * gateway answers `{ success: false, error: { reason, explanation } }` or plain text.
 */
interface RedditError {
  message: string
  fields: { field: string, message: string }[]
}

export function fromRedditResponse(response: PlatformResponse, events: readonly ConversionEvent[]): DeliveryOutcome[] {
  return classifyRedditResponse(response, events.length)
}

/** One outcome for each of the `count` events the request carried, in request order. */
export function classifyRedditResponse(response: PlatformResponse, count: number): DeliveryOutcome[] {
  const { status, headers } = response
  const all = (outcome: DeliveryOutcome) => Array.from({ length: count }, () => outcome)
  if (status >= 200 && status < 300) return all({ status: 'sent' })

  const error = readRedditError(response.body)
  const message = `Reddit answered HTTP ${status}: ${error?.message ?? (bodySnippet(response.body) || 'empty body')}`
  if (status === 429) return all(retry(message, retryAfterMs(headers)))
  if (status === 401) return all({ status: 'rejected', message: `${message}. The conversion access token is missing, wrong or revoked: generate a new one in Events Manager → Conversions API and update accessToken in the reddit destination` })
  if (status === 403) return all({ status: 'rejected', message: `${message}. The token may not post to this pixel: check pixelId (Events Manager, the pixel of this ad account) and that the token was made for it (an OAuth app token needs the adsconversions scope)` })
  if (status === 400 && error) return perEvent(error, count)
  return all(outcomeByStatus(status, headers, message))
}

// --- internal ---

/** The events Reddit names are rejected with their field messages; the rest were refused only with them. */
function perEvent(error: RedditError, count: number): DeliveryOutcome[] {
  const byEvent = new Map<number, string[]>()
  for (const { field, message } of error.fields) {
    const index = /\.events\[(\d+)\]/.exec(field)?.[1]
    if (index !== undefined && Number(index) < count) byEvent.set(Number(index), [...byEvent.get(Number(index)) ?? [], `${field}: ${message}`])
  }
  const head = `Reddit answered HTTP 400: ${error.message}`
  if (byEvent.size === 0) {
    const details = error.fields.map((f) => `${f.field}: ${f.message}`).join('; ')
    return Array.from({ length: count }, () => ({ status: 'rejected', message: details ? `${head} (${details})` : head }))
  }
  return Array.from({ length: count }, (_, index): DeliveryOutcome => {
    const problems = byEvent.get(index)
    if (problems) return { status: 'rejected', message: `${head} (${problems.join('; ')})` }
    return { status: 'retry', message: `not processed: Reddit refused the whole request because of other events in it (${head})` }
  })
}

function readRedditError(body: string): RedditError | undefined {
  const parsed = parseJsonObject(body)
  if (!parsed) return undefined
  const error = isObject(parsed.error) ? parsed.error : undefined
  const text = [error?.message, error?.reason, error?.explanation, parsed.message]
    .filter((part): part is string => typeof part === 'string' && part.length > 0)
  if (text.length === 0) return undefined
  const fields = (Array.isArray(error?.fields) ? error.fields : [])
    .filter(isObject)
    .map((f) => ({ field: String(f.field ?? ''), message: String(f.message ?? '') }))
  return { message: [...new Set(text)].join(': '), fields }
}
