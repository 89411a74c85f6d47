import type { H3Event } from 'h3'
import * as v from 'valibot'
import { definePlugin, type PluginContext } from '../../core/plugin.ts'
import { apiError } from '../../core/http/errors.ts'
import { routePattern } from '../../core/http/route-pattern.ts'
import { MAX_MESSAGE_BYTES, takeMessages, type IntakeSummary } from './intake.ts'
import { readSegmentBody } from './read-body.ts'
import { siteOfWriteKey } from './write-key.ts'

/** Segment's documented limit for one /v1/batch request (500 KB). */
const MAX_BATCH_BYTES = 500 * 1024
const SINGLE_TYPES = ['track', 'identify', 'page'] as const

/** The 200 answer, for the OpenAPI document (intake.ts builds it). */
const Answer = v.object({
  success: v.literal(true),
  accepted: v.pipe(v.number(), v.description('new conversions stored')),
  duplicates: v.pipe(v.number(), v.description('messages whose messageId was already taken (a retried batch)')),
  ignored: v.pipe(v.number(), v.description('identify, page…, and events the site does not know')),
  rejected: v.pipe(v.number(), v.description('messages refused for what they hold')),
  errors: v.optional(v.array(v.object({ index: v.number(), messageId: v.optional(v.string()), errors: v.array(v.string()) }))),
})
const ERRORS = {
  400: { description: 'Invalid JSON, UTF-8 or gzip; a body or `batch` of the wrong type; a refused message on a single-message route' },
  401: { description: 'No write key, or a wrong one' },
  402: { description: 'The site is paused' },
  413: { description: 'Past 32 KB a message or 500 KB a batch (decoded size)' },
  415: { description: 'A Content-Encoding other than gzip' },
  503: { description: 'The key could not be checked (temporary; retry)' },
}

const AUTH_NOTE = 'Authenticated with HTTP Basic: the site\'s private key (dcp_…) as the username, an empty password (or the body\'s writeKey).'

/**
 * Segment's HTTP Tracking API, so @segment/analytics-node and RudderStack's Node SDK pointed at dcgate send
 * conversions without code changes: POST /v1/track, /v1/identify, /v1/page and /v1/batch. See README.md.
 */
export default definePlugin({
  name: 'segment',
  setup(ctx) {
    for (const type of SINGLE_TYPES) {
      ctx.routes.add({
        method: 'POST',
        path: `/v1/${type}`,
        auth: 'none',
        summary: `Segment-compatible ${type}`,
        description: `One Segment ${type} message (at most 32 KB). ${type === 'track' ? 'An event the site knows becomes a conversion, as on the automation route; others are answered 200 and ignored.' : 'Accepted and ignored.'} ${AUTH_NOTE}`,
        tags: ['Segment-compatible intake'],
        responses: { 200: Answer, ...ERRORS },
        handler: async (event) => {
          const { site, body } = await authenticated(ctx, event, MAX_MESSAGE_BYTES)
          const summary = await takeMessages(site, [body], ctx.conversions, { type, receivedAt: new Date() })
          // One message: refusing it is the request's answer (400, nothing stored), as the automation route does.
          if (summary.rejected) throw apiError(400, { message: summary.errors![0]!.errors.join('; '), errors: summary.errors![0]!.errors })
          return answered(ctx, event, site.id, summary)
        },
      })
    }
    ctx.routes.add({
      method: 'POST',
      path: '/v1/batch',
      auth: 'none',
      summary: 'Segment-compatible batch',
      description: `Up to 500 KB of Segment messages in \`batch\`, each at most 32 KB, each taken or refused on its own: 200 with counts, and the refused messages under \`errors\`. ${AUTH_NOTE}`,
      tags: ['Segment-compatible intake'],
      responses: { 200: Answer, ...ERRORS },
      handler: async (event) => {
        const { site, body } = await authenticated(ctx, event, MAX_BATCH_BYTES)
        if (!Array.isArray(body.batch)) throw apiError(400, { message: 'batch: must be an array of messages', errors: ['batch: must be an array of messages'] })
        const summary = await takeMessages(site, body.batch, ctx.conversions, { batchSentAt: body.sentAt, receivedAt: new Date() })
        return answered(ctx, event, site.id, summary)
      },
    })
  },
})

async function authenticated(ctx: PluginContext, event: H3Event, limit: number) {
  const found = await siteOfWriteKey(event, () => readSegmentBody(event, limit), ctx.keys, (error) => ctx.report(error, { source: 'plugin:segment', path: routePattern(event) }))
  event.context.site = found.site // whose request this is, for the live events (core/http/answered.ts)
  return found
}

/** Counts only in the log: no message content, no personal data. A batch's refused messages go to the live events. */
function answered(ctx: PluginContext, event: H3Event, siteId: string, summary: IntakeSummary): IntakeSummary {
  if (summary.rejected) event.context.partlyRefused = { refused: summary.rejected, reasons: summary.errors!.flatMap((e) => e.errors) }
  const counts = `site ${siteId}: ${summary.accepted} accepted, ${summary.duplicates} duplicates, ${summary.ignored} ignored, ${summary.rejected} rejected`
  if (summary.rejected) ctx.logger.warn(`Segment intake, ${counts}`)
  else ctx.logger.debug(`Segment intake, ${counts}`)
  return summary
}
