import type { DeliveryPlan } from './decide.ts'
import type { EventMapping } from './mapping.ts'

/** What the intake answers for one conversion. */
export interface AcceptResult {
  messageId: string
  success: boolean
  message: string
  identity: { matched: number, created: number, enriched: string[] }
  errors?: { provider?: string, status: string, message: string }[]
}

export const DUPLICATE = 'duplicate_delivery_skipped'

/** Where one delivery stands after an attempt. */
export interface AttemptResult { id: string, provider: string, status: string, error: string | null }

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
  const sent = attempts.filter((r) => r.status === 'sent').length
  const errors = attempts.filter((r) => r.status !== 'sent').map((r) => ({ provider: r.provider, status: r.status, message: r.error ?? r.status }))
  const message = sent === attempts.length ? `sent to ${sent} platform${sent === 1 ? '' : 's'}` : `sent to ${sent} of ${attempts.length} platforms`
  return errors.length ? { success: sent > 0, message, errors } : { success: true, message }
}
