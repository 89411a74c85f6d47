/**
 * Pure classification of a Measurement Protocol answer. /mp/collect answers 2xx whatever the data (README
 * "Answers"), so a 2xx there is `sent`. The validation server (/debug/mp/collect, `validate: true`) answers 200 with
 * `validationMessages: [{ fieldPath, description, validationCode }]`: the events a message names by index
 * ("Event at index: [2] …") are rejected and the others retried; a message naming no event rejects all.
 */
import type { DeliveryOutcome, PlatformResponse } from '../../../core/delivery/types.ts'
import { describeHttp, isObject, outcomeByStatus, parseJsonObject } from '../../shared/helpers.ts'

interface ValidationMessage { fieldPath: string, description: string, validationCode: string }

const LABEL = 'Google Analytics'

/** One outcome for each of the `count` events (or refunds) the request carried, in request order. */
export function fromGa4Response(response: PlatformResponse, events: readonly unknown[]): DeliveryOutcome[] {
  const count = events.length
  const all = (outcome: DeliveryOutcome) => Array.from({ length: count }, () => outcome)
  const { status, headers } = response
  if (status >= 200 && status < 300) {
    const messages = validationMessagesOf(response.body)
    return messages.length === 0 ? all({ status: 'sent' }) : perEvent(messages, count)
  }
  const message = describeHttp(LABEL, status, response.body)
  // The protocol documents no error status; a 401/403 comes from a proxy or server-side GTM in front of it.
  if (status === 401 || status === 403) return all({ status: 'rejected', message: `${message}. Check measurementId and apiSecret (Admin → Data streams → the stream → Measurement Protocol API secrets) and any proxy at baseUrl` })
  return all(outcomeByStatus(status, headers, message))
}

// --- internal ---

function perEvent(messages: ValidationMessage[], count: number): DeliveryOutcome[] {
  const byIndex = new Map<number, string[]>()
  const general: string[] = []
  for (const message of messages) {
    const text = `${message.validationCode} at ${message.fieldPath}: ${message.description}`
    const index = eventIndexOf(message)
    if (index === undefined || index >= count) general.push(text)
    else byIndex.set(index, [...byIndex.get(index) ?? [], text])
  }
  const prefix = `${LABEL}'s validation server refused`
  if (general.length > 0) return Array.from({ length: count }, () => ({ status: 'rejected', message: `${prefix} the request: ${general.join('; ')}` }))
  return Array.from({ length: count }, (_, index) => {
    const own = byIndex.get(index)
    return own
      ? { status: 'rejected', message: `${prefix} event ${index}: ${own.join('; ')}` }
      : { status: 'retry', message: `${prefix} other events of the request; this one is sent again on its own` }
  })
}

/** The event a message is about: `events[2].params` or "Event at index: [2]". */
function eventIndexOf(message: ValidationMessage): number | undefined {
  const match = /^events\[(\d+)\]/.exec(message.fieldPath) ?? /index: \[(\d+)\]/.exec(message.description)
  return match ? Number(match[1]) : undefined
}

function validationMessagesOf(body: string): ValidationMessage[] {
  const list = parseJsonObject(body)?.validationMessages
  if (!Array.isArray(list)) return []
  return list.filter(isObject).map((entry) => ({
    fieldPath: String(entry.fieldPath ?? ''),
    description: String(entry.description ?? ''),
    validationCode: String(entry.validationCode ?? 'VALIDATION_CODE_UNSPECIFIED'),
  }))
}
