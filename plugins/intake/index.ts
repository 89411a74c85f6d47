import { definePlugin } from '../../core/plugin.ts'
import { apiError } from '../../core/http/errors.ts'
import { ConversionRequest, toConversionInput } from '../../core/intake/conversion-request.ts'
import { ConversionResponse } from './schema.ts'
import { addSourceRoute } from './sources-route.ts'

/** Bumped when the meaning of the intake request or response changes (spec: v<year>-<month>). */
export const INTAKE_ADAPTER_VERSION = 'v2026-11'

/** Server-to-server conversion intake: POST /api/v1/conversions/automation, and webhooks at /api/v1/conversions/:source/:api_key. */
export default definePlugin({
  name: 'intake',
  setup(ctx) {
    const { routes, conversions } = ctx
    routes.add({
      method: 'POST',
      path: '/api/v1/conversions/automation',
      auth: 'key',
      summary: 'Send a conversion',
      description: 'Deduplicates by messageId, recovers click ids from earlier visits, and delivers to every connected ad platform. 202 when every event was processed without error, 207 when one could not be sent to any platform.',
      tags: ['Conversions'],
      body: ConversionRequest,
      responses: { 202: ConversionResponse, 207: { description: 'Accepted; at least one event could not be sent to any platform', schema: ConversionResponse } },
      precheck: (event) => {
        if (event.context.site!.status === 'paused') throw apiError(402, { message: 'This site is paused; nothing was sent', code: 'APP_INACTIVE' })
      },
      invalid: (problems) => apiError(422, { message: problems.join('; '), code: 'INVALID_CONVERSION', errors: problems }),
      handler: async (event, { body }) => {
        const started = performance.now()
        const result = await conversions.accept(event.context.site!, toConversionInput(body), { source: 'automation', sourceEventType: 'automation', confirmation: 'tracked', trust: 'trusted' })
        event.res.status = result.success ? 202 : 207
        return { accepted: true, source: 'automation', adapter_version: INTAKE_ADAPTER_VERSION, events: [result], duration_ms: Math.round(performance.now() - started) }
      },
    })
    addSourceRoute(ctx, INTAKE_ADAPTER_VERSION)
  },
})
