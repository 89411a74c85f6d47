/**
 * Pure classification of a Conversions API v3 answer. A 2xx means Snap took the request; an error answers
 * `{ status: 'INVALID' | …, reason }` (Verify Set Up: missing required fields, a purchase without price or currency,
 * a bad timestamp, unhashed or insufficient PII all answer INVALID with 400), which rejects every event of it.
 */
import type { DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { bodySnippet, outcomeByStatus, parseJsonObject, retry, retryAfterMs } from '../../shared/helpers.ts'

export function fromSnapchatResponse(response: PlatformResponse, events: readonly unknown[]): DeliveryOutcome[] {
  const { status, headers } = response
  const all = (outcome: DeliveryOutcome) => events.map(() => outcome)
  if (status >= 200 && status < 300) return all({ status: 'sent' })
  const answer = parseJsonObject(response.body)
  const reason = typeof answer?.reason === 'string' ? `${String(answer.status ?? 'ERROR')}: ${answer.reason}` : (bodySnippet(response.body) || 'empty body')
  const message = `Snapchat answered HTTP ${status}: ${reason}`
  if (status === 429) return all(retry(message, retryAfterMs(headers)))
  if (status === 401 || status === 403) return all({ status: 'rejected', message: `${message}. The access token is wrong, revoked or not made for this pixel: generate a Conversions API token for pixelId in Ads Manager → Business Details and update accessToken in the snapchat destination` })
  return all(outcomeByStatus(status, headers, message))
}
