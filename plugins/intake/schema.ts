import * as v from 'valibot'

/** The automation route's answer; its body is core/intake/conversion-request.ts. */
const Result = v.object({
  messageId: v.string(),
  success: v.boolean(),
  message: v.string(),
  identity: v.object({ matched: v.number(), created: v.number(), enriched: v.array(v.string()) }),
  errors: v.optional(v.array(v.object({ provider: v.optional(v.string()), status: v.string(), message: v.string() }))),
})
export const ConversionResponse = v.object({
  accepted: v.boolean(),
  source: v.string(),
  adapter_version: v.pipe(v.string(), v.description('Intake adapter version, v<year>-<month>')),
  events: v.array(Result),
  duration_ms: v.number(),
})

/** One refund or cancellation recorded (docs/api/sources.md, "Refunds and cancellations"). */
export const RefundAnswer = v.object({
  order_id: v.string(),
  refund_id: v.string(),
  outcome: v.pipe(v.picklist(['applied', 'repeat', 'pending_order']), v.description('applied to the order\'s conversions; a repeat already counted; or pending_order: kept until the order is stored (30 days at most), then applied')),
})
