import { createHash } from 'node:crypto'
import * as v from 'valibot'
import { acceptRefund } from '../../core/delivery/queries/pending-refunds.ts'
import { isRefundEvent, toAutomationRefund } from '../../core/intake/refund-request.ts'
import { SourceInputError, type SourceRefund } from '../../core/registry.ts'
import { definePlugin } from '../../core/plugin.ts'
import { apiError } from '../../core/http/errors.ts'
import { ConversionRequest, toConversionInput } from '../../core/intake/conversion-request.ts'
import { ConversionResponse, RefundAnswer } from './schema.ts'
import { addSourceRoute } from './sources-route.ts'

/** Bumped when the meaning of the intake request or response changes (spec: v<year>-<month>). */
export const INTAKE_ADAPTER_VERSION = 'v2026-11'

const AutomationResponse = v.object({
  ...ConversionResponse.entries,
  refund: v.optional(v.pipe(RefundAnswer, v.description('A body with event Refund, Order Refunded or Order Cancelled: the refund recorded'))),
})

/** A refund body read as a refund; 422 naming each field, as for conversions. Without refund_id, the body's content names it, so a retry counts once. */
function readRefund(body: Record<string, unknown>): SourceRefund {
  try {
    return toAutomationRefund(body, `body-${createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 32)}`)
  }
  catch (error) {
    if (!(error instanceof SourceInputError)) throw error
    throw apiError(422, { message: error.message, code: 'INVALID_CONVERSION', errors: error.problems })
  }
}

/** Server-to-server conversion intake: POST /api/v1/conversions/automation, and webhooks at /api/v1/conversions/:source/:api_key. */
export default definePlugin({
  name: 'intake',
  setup(ctx) {
    const { routes, conversions, prepared, hooks, logger } = ctx
    routes.add({
      method: 'POST',
      path: '/api/v1/conversions/automation',
      auth: 'key',
      summary: 'Send a conversion',
      description: 'Deduplicates by messageId, recovers click ids from earlier visits, and delivers to every connected ad platform. 202 when every event was processed without error (sent, or queued by dcgate for a platform\'s next batch), 207 when one was refused by or could not be sent to every platform.',
      tags: ['Conversions'],
      body: ConversionRequest,
      responses: { 202: AutomationResponse, 207: { description: 'Accepted; at least one event was refused by or could not be sent to every platform it was meant for', schema: ConversionResponse } },
      precheck: (event) => {
        if (event.context.site!.status === 'paused') throw apiError(402, { message: 'This site is paused; nothing was sent', code: 'APP_INACTIVE' })
      },
      invalid: (problems) => apiError(422, { message: problems.join('; '), code: 'INVALID_CONVERSION', errors: problems }),
      handler: async (event, { body }) => {
        const started = performance.now()
        if (isRefundEvent(body)) {
          // A refund or cancellation (docs/api/conversions.md, "Refunds"): the key is trusted, no signature needed.
          const refund = await acceptRefund({ prepared, hooks, logger }, event.context.site!.id, readRefund(body))
          event.res.status = 202
          return { accepted: true, source: 'automation', adapter_version: INTAKE_ADAPTER_VERSION, events: [], refund, duration_ms: Math.round(performance.now() - started) }
        }
        const result = await conversions.accept(event.context.site!, toConversionInput(body), { source: 'automation', sourceEventType: 'automation', confirmation: 'tracked', trust: 'trusted' })
        event.res.status = result.success ? 202 : 207
        return { accepted: true, source: 'automation', adapter_version: INTAKE_ADAPTER_VERSION, events: [result], duration_ms: Math.round(performance.now() - started) }
      },
    })
    addSourceRoute(ctx, INTAKE_ADAPTER_VERSION)
  },
})
