import * as v from 'valibot'

/** The automation route's answer; its body is core/intake/conversion-request.ts. */
const Result = v.object({
  messageId: v.string(),
  success: v.pipe(v.boolean(), v.description('true when every platform it was meant for took it or dcgate queued it for that platform\'s next batch, or it was deliberately not sent; false when no platform took it (207)')),
  message: v.pipe(v.string(), v.description('What happened, per platform: "sent to 2 platforms"; "sent to google_ads; queued: meta takes at most 20 requests a second; it goes with the next batch" (queued by dcgate, no error); "sent to 1 of 2 platforms" with errors')),
  identity: v.object({ matched: v.number(), created: v.number(), enriched: v.array(v.string()) }),
  errors: v.optional(v.pipe(v.array(v.object({ provider: v.optional(v.string()), status: v.string(), message: v.string() })), v.description('The deliveries a platform refused or that could not be sent; a queued one is not an error and is not listed'))),
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
