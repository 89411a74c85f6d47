/**
 * An explicit refund or cancellation in the automation body (POST /api/v1/conversions/automation, and Zapier, Make
 * or n8n at their source URLs: adapters/sources/automation/README.md): the event names it, the properties say which
 * order and how much. At a source URL it is recorded only when signed (plugins/intake/sources-route.ts).
 */
import * as v from 'valibot'
import { formatIssues } from '../config/issues.ts'
import { SourceInputError, type SourceRefund } from '../registry.ts'

/** Event names (any case) that are a refund, and those that cancel the whole order. */
const REFUND_EVENTS = new Set(['refund', 'order refunded'])
const CANCEL_EVENTS = new Set(['order cancelled', 'order canceled'])

export function isRefundEvent(body: Record<string, unknown>): boolean {
  const event = typeof body.event === 'string' ? body.event.trim().toLowerCase() : ''
  return REFUND_EVENTS.has(event) || CANCEL_EVENTS.has(event)
}

const Id = (what: string) => v.pipe(
  v.union([v.string(), v.pipe(v.number(), v.safeInteger(), v.minValue(0))], `must be ${what} as a string`), v.transform(String), v.trim(),
  v.minLength(1, 'must not be empty'), v.maxLength(255, 'must be at most 255 characters'),
)

const RefundRequest = v.looseObject({
  event: v.string(),
  properties: v.looseObject({
    order_id: Id('the order id the purchase was sent with'),
    refund_id: v.optional(Id('your id of this refund')),
    amount: v.optional(v.pipe(
      v.union([v.number(), v.pipe(v.string(), v.trim(), v.regex(/^\d+(\.\d+)?$/, 'must be an amount such as 10.50'), v.transform(Number))], 'must be an amount such as 10.50'),
      v.finite('must be an amount such as 10.50'), v.minValue(0, 'must be 0 or more'),
    )),
    currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z]{3}$/, 'must be a 3-letter currency code'), v.toUpperCase())),
    refunded_at: v.optional(v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 time with its zone, e.g. 2026-11-24T09:30:00Z'))),
  }, 'must be an object with order_id'),
}, 'must be an object')

/**
 * `Refund` / `Order Refunded` (an amount, or the whole value without one) and `Order Cancelled` (the whole value).
 * Without `refund_id` a cancellation is `cancelled` and a refund takes `fallbackId` (derived from the body's bytes,
 * so a tool's retry of the same body counts once).
 */
export function toAutomationRefund(body: Record<string, unknown>, fallbackId: string): SourceRefund {
  const result = v.safeParse(RefundRequest, body)
  if (!result.success) {
    const problems = formatIssues(result.issues)
    throw new SourceInputError(problems.join('; '), problems)
  }
  const { event, properties } = result.output
  const cancels = CANCEL_EVENTS.has(event.trim().toLowerCase())
  const amount = cancels ? undefined : properties.amount
  const currency = cancels ? undefined : properties.currency
  return {
    orderId: properties.order_id,
    refundId: properties.refund_id ?? (cancels ? 'cancelled' : fallbackId),
    // Absent fields stay absent: no amount is the whole value, not an amount of undefined.
    ...(amount === undefined ? {} : { amount }),
    ...(currency === undefined ? {} : { currency }),
    at: properties.refunded_at ? new Date(properties.refunded_at) : new Date(),
  }
}

