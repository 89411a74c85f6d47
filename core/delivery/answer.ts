import type { DeliveryPlan } from './decide.ts'
import type { EventMapping } from './mapping.ts'

/** What the intake answers for one conversion. */
export interface AcceptResult {
  messageId: string
  success: boolean
  message: string
  identity: { matched: number, created: number, enriched: string[] }
  errors?: { provider?: string, status: string, message: string }[]
  /** A public repeat, answered as new (answerAsNew): a symbol key, so it never reaches the JSON answer. */
  [ANSWERED_AS_NEW]?: true
}

export const DUPLICATE = 'duplicate_delivery_skipped'
export const ANSWERED_AS_NEW: unique symbol = Symbol('dcgate.answeredAsNew')

/** Whether the conversion repeated a stored one, whatever its sender was told (the metrics count it so). */
export const wasRepeat = (result: AcceptResult): boolean => result.message === DUPLICATE || result[ANSWERED_AS_NEW] === true

/**
 * Where one delivery stands after an attempt. `queued` when dcgate itself held it back (the platform's request budget
 * for this second was used up): it goes with the next batch, so it is no error.
 */
export interface AttemptResult { id: string, provider: string, status: string, error: string | null, queued?: true }

/** The answer's success and message: what happened to the conversion, and to each inline attempt. */
export function summarise(
  plan: DeliveryPlan, mapping: EventMapping, event: string, attempts: readonly AttemptResult[],
): Pick<AcceptResult, 'success' | 'message' | 'errors'> {
  if (mapping.kind === 'unknown') {
    return { success: false, message: 'not delivered: unknown event', errors: [{ status: 'unknown_event', message: `"${event}" is neither a standard event (Purchase, Lead, CompleteRegistration, Schedule) nor one of the site's active events` }] }
  }
  if (mapping.kind === 'unmapped') return { success: true, message: `stored; "${event}" sends as no standard event, so no platform receives it` }
  if (plan.state === 'held') return { success: true, message: 'held until qualified' }
  if (plan.providers.length === 0) return { success: true, message: 'stored; no ad platform is connected' }
  if (plan.skipReason) return { success: true, message: `not sent: ${plan.skipReason}` }
  if (!plan.inline) return { success: true, message: 'stored; delivering in the background' }
  const sent = attempts.filter((r) => r.status === 'sent')
  const queued = attempts.filter((r) => r.status !== 'sent' && r.queued)
  const errors = attempts.filter((r) => r.status !== 'sent' && !r.queued).map((r) => ({ provider: r.provider, status: r.status, message: r.error ?? r.status }))
  // A queued delivery counts as taken: dcgate sends it with the next batch, and its outcome is in the delivery report.
  const success = errors.length === 0 || sent.length + queued.length > 0
  if (queued.length === 0) {
    const message = errors.length === 0 ? `sent to ${sent.length} platform${sent.length === 1 ? '' : 's'}` : `sent to ${sent.length} of ${attempts.length} platforms`
    return errors.length ? { success, message, errors } : { success, message }
  }
  const message = [
    sent.length ? `sent to ${sent.map((r) => r.provider).join(', ')}` : undefined,
    ...queued.map((r) => r.error ?? `queued: ${r.provider} goes with the next batch`),
    errors.length ? `not sent to ${errors.map((e) => e.provider).join(', ')}` : undefined,
  ].filter(Boolean).join('; ')
  return errors.length ? { success, message, errors } : { success, message }
}

/**
 * What a public sender (the tracking script, an unsigned body: anyone with the cop_key) is told of a messageId
 * already stored: what a new conversion would be told. A distinct answer would let anyone probe which ids exist,
 * and predictable ids such as `shopify-order-<n>` would reveal a shop's order volume. Public conversions are
 * delivered in the background, so there is no attempt to report.
 */
export function answerAsNew(plan: DeliveryPlan, mapping: EventMapping, event: string, messageId: string, identity: AcceptResult['identity']): AcceptResult {
  return { messageId, ...summarise({ ...plan, inline: false }, mapping, event, []), identity, [ANSWERED_AS_NEW]: true }
}
