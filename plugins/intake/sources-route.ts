import * as v from 'valibot'
import { apiError } from '../../core/http/errors.ts'
import { readRawBody } from '../../core/http/body.ts'
import { toStorableJsonBytes } from '../../core/http/text.ts'
import type { PluginContext } from '../../core/plugin.ts'
import { SourceInputError, type IntakeSourceDefinition, type SourceConversion } from '../../core/registry.ts'
import type { AcceptResult } from '../../core/delivery/pipeline.ts'
import { acceptRefund, applyPendingRefundsOf, reconcilePendingRefunds } from '../../core/delivery/queries/pending-refunds.ts'
import { purgeWaits } from '../../core/delivery/queries/waits.ts'
import { ConversionResponse, RefundAnswer } from './schema.ts'
import { WithdrawalAnswer, applyWithdrawals, replacedAfterRace, settleWaiting } from './source-waits.ts'

const Params = v.object({
  source: v.pipe(v.string(), v.maxLength(64)),
  api_key: v.pipe(v.string(), v.maxLength(128)),
})

const SourceResponse = v.object({
  ...ConversionResponse.entries,
  ignored: v.optional(v.pipe(v.string(), v.description('Why the webhook carried no conversion (e.g. an unpaid order); nothing was stored'))),
  refund: v.optional(v.pipe(RefundAnswer, v.description('The refund or cancellation the webhook reported'))),
  refunds: v.optional(v.pipe(v.array(RefundAnswer), v.description('The refunds and cancellations a body reported beside its conversions (a WooCommerce order lists its refunds), each recorded after the conversions'))),
  withdrawals: v.optional(v.pipe(v.array(WithdrawalAnswer), v.description('Conversions stored waiting that this webhook withdrew (a Stripe PaymentIntent that paid an invoice), applied before its own conversions'))),
})

const notFound = () => apiError(404, { message: 'Unknown key or source' })

/**
 * POST /api/v1/conversions/:source/:api_key: a payment or automation webhook, authenticated by its own
 * signature (the cop_key in the path is public). Answered once stored; the worker delivers in the background.
 */
export function addSourceRoute({ routes, sites, registry, conversions, config, prepared, hooks, logger, schedule, report }: PluginContext, adapterVersion: string): void {
  const refunds = { prepared, hooks, logger }
  // A refund that came before its order is applied as soon as the order is stored here; orders stored through other
  // routes (the tracking script, the automation route) are matched by this job, which also drops those past 30 days.
  schedule({ name: 'intake:pending-refunds', everyMs: PENDING_REFUNDS_EVERY_MS, run: () => reconcilePendingRefunds(refunds) })
  // Withdrawals that came before their conversion, and marks of conversions long sent, are dropped after 30 days.
  schedule({ name: 'intake:conversion-waits', everyMs: PENDING_REFUNDS_EVERY_MS, run: () => purgeWaits(prepared) })
  async function applyPendingRefunds(siteId: string, stored: readonly SourceConversion[]): Promise<void> {
    const orderIds = stored.flatMap((c) => c.orderId === undefined ? [] : [c.orderId])
    const messageIds = stored.flatMap((c) => c.messageId === undefined ? [] : [c.messageId])
    await applyPendingRefundsOf(refunds, siteId, orderIds, messageIds)
      // The conversions are stored: a failure here is reported, and the job applies the refunds on its next turn.
      .catch((error: unknown) => report(error, { source: 'intake:pending-refunds' }))
  }

  routes.add({
    method: 'POST',
    path: '/api/v1/conversions/:source/:api_key',
    auth: 'none',
    summary: 'Receive a webhook from a payment platform or automation tool',
    description: 'Shopify orders/paid, WooCommerce orders, Stripe payments, and Zapier/Make/n8n, and their refunds and cancellations (signed only; one before its order is kept until the order arrives). The source must be configured under the site\'s `sources`. The raw body is verified against the source\'s signature; 200 once every conversion is stored, delivery follows in the background. See docs/api/sources.md.',
    tags: ['Conversions'],
    params: Params,
    responses: { 200: SourceResponse },
    invalid: () => notFound(),
    handler: async (event, { params }) => {
      const started = performance.now()
      const site = sites.byCopKey(params.api_key)
      const configured = site && registry.forSite(site.id, 'intake-source').find((c) => c.definition.name === params.source)
      if (!site || !configured) throw notFound()
      event.context.site = site // whose request this is, for the live events (core/http/answered.ts)
      if (site.status === 'paused') throw apiError(402, { message: 'This site is paused; nothing was sent', code: 'APP_INACTIVE' })

      const source = configured.definition as IntakeSourceDefinition<unknown>
      const raw = await readRawBody(event, config.server.bodyLimit)
      const verified = checkSignature(source, raw, event.req.headers, configured.options)
      // After the signature (it covers the bytes as sent): text PostgreSQL cannot store is cleaned, not refused, as a
      // webhook's sender cannot change a customer's note and a refusal would lose the order (docs/api/errors.md).
      const parsed = parseBody(source, toStorableJsonBytes(raw), event.req.headers, configured.options)
      const base = { accepted: true, source: source.name, adapter_version: adapterVersion }
      if (parsed.kind === 'ignored') return { ...base, accepted: false, ignored: parsed.reason, events: [], duration_ms: elapsed(started) }
      if (parsed.kind === 'refund') {
        // Anyone can post an unsigned body: only a verified one may mark a sale refunded.
        if (!verified) return { ...base, accepted: false, ignored: 'a refund must be signed; nothing was recorded', events: [], duration_ms: elapsed(started) }
        const answer = await acceptRefund(refunds, site.id, parsed.refund)
        return { ...base, accepted: true, events: [], refund: answer, duration_ms: elapsed(started) }
      }

      // Before the conversions: a Checkout Session takes the messageId its PaymentIntent's waiting copy holds.
      const withdrawn = verified && parsed.withdrawals?.length ? { withdrawals: await applyWithdrawals(prepared, site.id, parsed.withdrawals) } : {}
      // One after another: a webhook carries few conversions, and the answer lists them in order.
      const events: AcceptResult[] = []
      for (const conversion of parsed.conversions) {
        const confirmation = verified ? conversion.confirmation ?? source.confirmation : 'tracked'
        // An unsigned body is public: its messageId cannot take the place of a signed source's (core/delivery/trust.ts).
        const waits = verified ? conversion.awaitsWithdrawalSeconds : undefined
        const accept = () => conversions.accept(site, conversion, { source: source.name, sourceEventType: parsed.sourceEventType, confirmation, trust: verified ? 'trusted' : 'public', deliver: 'background', waitSeconds: waits })
        let result = await accept()
        // The waiting copy this body withdrew may have been stored between its withdrawal and this accept: once more.
        if (verified && await replacedAfterRace(prepared, site.id, conversion, result, parsed.withdrawals)) result = await accept()
        events.push(waits === undefined ? result : await settleWaiting(prepared, site.id, conversion, parsed.sourceEventType, result))
      }
      // Only a signed order takes a waiting refund: an unsigned body may carry any order id (refunds.ts).
      if (verified) await applyPendingRefunds(site.id, parsed.conversions)
      if (!parsed.refunds?.length) return { ...base, ...withdrawn, events, duration_ms: elapsed(started) }
      // After the conversions, so a body that brings an order and its refunds finds the order stored.
      if (!verified) return { ...base, ...withdrawn, events, ignored: 'refunds must be signed; none was recorded', duration_ms: elapsed(started) }
      const answers = []
      for (const refund of parsed.refunds) answers.push(await acceptRefund(refunds, site.id, refund))
      return { ...base, ...withdrawn, events, refunds: answers, duration_ms: elapsed(started) }
    },
  })
}

/** 401 when a required signature is missing or wrong, or an optional one is present and wrong. */
function checkSignature(source: IntakeSourceDefinition<unknown>, raw: Uint8Array, headers: Headers, options: unknown): boolean {
  if (source.signature === 'optional' && !source.isSigned(headers)) return false
  if (source.verify(raw, headers, options, new Date())) return true
  throw apiError(401, { message: `The ${source.name} signature is missing or does not match this site's configured secret; nothing was stored`, code: 'INVALID_SIGNATURE' })
}

function parseBody(source: IntakeSourceDefinition<unknown>, raw: Uint8Array, headers: Headers, options: unknown) {
  try {
    return source.parse(raw, headers, options)
  }
  catch (error) {
    if (!(error instanceof SourceInputError)) throw error
    throw apiError(422, { message: error.message, code: 'INVALID_WEBHOOK', errors: error.problems })
  }
}

const elapsed = (started: number) => Math.round(performance.now() - started)

/** How often pending refunds are matched to orders stored through other routes, and purged after 30 days. */
const PENDING_REFUNDS_EVERY_MS = 5 * 60_000

