import type { PluginContext } from '../../core/plugin.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'
import { resolveEvent } from '../../core/delivery/mapping.ts'
import { ipSubject, overLimit } from '../../core/http/rate-limit.ts'
import type { CollectBody } from './protocol.ts'
import { visitContact } from './queries.ts'
import type { Visitor } from './request.ts'
import type { CaptureBatch } from './store/rows.ts'
import type { CaptureWriter } from './store/writer.ts'

interface PixelInput {
  ctx: PluginContext
  writer: CaptureWriter
  site: ActiveSite
  body: CollectBody
  batch: CaptureBatch
  visitor: Visitor
  /** The request's bot verdict: a bot's conversion events make no conversion. */
  bot: boolean
  caps: PixelCaps
}

/** `capture.conversionsPerRequest` and `capture.conversionsPerVisit` (options.ts). */
export interface PixelCaps { perRequest: number, perVisit: number }

/** The window of the per-visit cap: a visit (the script's `sid`) does not outlive a day of activity. */
const VISIT_WINDOW_S = 24 * 3600

/**
 * A tracked event that is a conversion (a standard event, or a site event with `sendsAs`) enters the delivery
 * pipeline as `tracked` and `public` (anyone can send it, with any id), with the visit's click ids, IP and user
 * agent; "when qualified" events are held there.
 * The visit is written first so the pipeline's bot and consent gates see it, and an identified visit's email goes
 * with the conversion. Delivery runs in the background.
 * Anyone with the cop_key can post: a bot makes none, and one request and one visit make a few at most (caps); the
 * events past a cap are kept as events only.
 */
export async function acceptPixelConversions({ ctx, writer, site, body, batch, visitor, bot, caps }: PixelInput): Promise<void> {
  if (bot) return
  const mapped = body.hits.flatMap((hit, index) => {
    if (hit.t !== 'event' || resolveEvent(site.config, hit.name).kind !== 'mapped') return []
    return [{ hit, row: batch.events[index]! }]
  })
  // Most requests carry page views only: no cap key to build, no counter to read.
  if (mapped.length === 0) return
  const conversions = await withinVisitCap(ctx, `${site.id}:${body.sid ? `sid:${body.sid}` : `ip:${ipSubject(visitor.ip)}`}`, mapped.slice(0, caps.perRequest), caps.perVisit)
  if (mapped.length > conversions.length) ctx.logger.debug(`capture: ${mapped.length - conversions.length} conversion events of one request kept as events only (conversion caps)`)
  if (conversions.length === 0) return
  await writer.flush()
  // An identified visit lends its email: hashed for the platforms, and the key a held conversion is released by.
  const visit = body.sid ? await visitContact(ctx.prepared, site.id, body.sid) : undefined
  for (const { hit, row } of conversions) {
    const props = hit.props ?? {}
    const orderId = typeof props.order_id === 'string' || typeof props.order_id === 'number' ? String(props.order_id).slice(0, 255) || undefined : undefined
    const chosenId = hit.id ?? orderId
    await ctx.conversions.accept(site, {
      // The page's own id for the event (the eventID its Meta pixel sends), else the order id (its Google tag's
      // transaction_id): the platforms receive it as their dedup key, so the site's own pixel and tag and this copy
      // count once; and a server-side send with the same id supersedes it here (core/delivery/trust.ts).
      messageId: chosenId ?? `pixel-${row.id}`,
      messageIdGenerated: chosenId === undefined,
      event: hit.name,
      occurredAt: new Date(row.occurred_at),
      value: typeof props.value === 'number' ? props.value : undefined,
      currency: typeof props.currency === 'string' && /^[A-Za-z]{3}$/.test(props.currency) ? props.currency.toUpperCase() : undefined,
      orderId,
      contentName: typeof props.content_name === 'string' ? props.content_name : undefined,
      contentCategory: typeof props.content_category === 'string' ? props.content_category : undefined,
      identifiers: { ...body.clickIds, dc_session_id: body.sid },
      traits: visit?.email ? { email: visit.email, phone: visit.phone ?? undefined } : undefined,
      ip: visitor.ip,
      userAgent: visitor.userAgent,
      pageUrl: hit.url,
    }, { source: 'pixel', sourceEventType: 'track', confirmation: 'tracked', trust: 'public', deliver: 'background' })
  }
}

/** The first of `wanted` the visit may still make, each counted (a visit without `sid` is counted by its address). */
async function withinVisitCap<T>(ctx: PluginContext, visit: string, wanted: readonly T[], perVisit: number): Promise<T[]> {
  const allowed: T[] = []
  for (const item of wanted) {
    if (await overLimit(ctx.storage, `capture-conversions:${visit}`, perVisit, VISIT_WINDOW_S) !== undefined) break
    allowed.push(item)
  }
  return allowed
}
