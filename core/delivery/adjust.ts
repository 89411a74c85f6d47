/**
 * Refunds told to the platforms (issue 18). When a refund or cancellation is counted against stored conversions
 * (`conversion:refunded`), each platform that received one of them gets an adjustment row in the outbox: a retraction
 * for a full refund, a restatement with the value left for a partial one. The worker sends it once the conversion
 * itself was sent, with the same retries, budgets and report. A platform whose API documents no refund gets a skipped
 * row saying so, rather than silence.
 */
import { createHash } from 'node:crypto'
import type { DcgateHookable, RefundedConversion } from '../hooks.ts'
import type { AdPlatformDefinition, Registry } from '../registry.ts'
import { insertAdjustments, readDelivered, type DeliveredConversion, type NewAdjustment } from './queries/adjustments.ts'
import type { ClaimedDelivery, StoredAdjustment } from './queries/outbox.ts'
import type { AdjustmentEvent, ConversionEvent } from './types.ts'

export interface AdjustDeps {
  prepared: Parameters<typeof readDelivered>[0]
  registry: Registry
  onError: (error: unknown) => void
}

/** Listens for counted refunds and writes their adjustment rows. A failure is reported, never thrown at the refund's route. */
export function listenForRefunds(hooks: DcgateHookable, deps: AdjustDeps): () => void {
  return hooks.hook('conversion:refunded', async (refund) => {
    try {
      await recordAdjustments(deps, refund)
    }
    catch (error) {
      deps.onError(error)
    }
  })
}

/** Writes one adjustment row per platform delivery of the refunded conversions; answers how many were new. */
export async function recordAdjustments(deps: AdjustDeps, refund: RefundedConversion): Promise<number> {
  if (refund.conversionIds.length === 0) return 0
  const delivered = await readDelivered(deps.prepared, refund.conversionIds)
  return insertAdjustments(deps.prepared, planAdjustments(refund, delivered, (siteId, provider) =>
    deps.registry.forSite(siteId, 'ad-platform').find((c) => c.definition.name === provider)?.definition as AdPlatformDefinition<unknown> | undefined))
}

/** Pure: the rows a refund adds. A platform no longer configured gets none; one without refunds, a skipped row. */
export function planAdjustments(
  refund: RefundedConversion, delivered: readonly DeliveredConversion[],
  platformOf: (siteId: string, provider: string) => AdPlatformDefinition<unknown> | undefined,
): NewAdjustment[] {
  return delivered.flatMap((row): NewAdjustment[] => {
    const platform = platformOf(row.site_id, row.provider)
    if (!platform) return []
    const skip = !platform.adjustments ? notSupported(platform)
      : row.status === 'failed' || row.status === 'skipped' ? notDelivered(platform, row.status)
        : undefined
    return [{
      conversion_id: row.conversion_id, site_id: row.site_id, provider: row.provider, refund_id: refundKey(refund.refundId),
      status: skip ? 'skipped' : 'pending', error: skip ?? null, adjustment: toAdjustment(refund, row),
    }]
  })
}

/**
 * A refund without an amount (a cancellation, a full refund), or one that brings the refunded total to the value, is a
 * retraction; otherwise the platform is told the value left after every refund so far (the row already counts this one).
 */
export function toAdjustment(refund: Pick<RefundedConversion, 'refundId' | 'amount' | 'at'>, row: Pick<DeliveredConversion, 'value' | 'currency' | 'refunded_value'>): StoredAdjustment {
  const base = { refundId: refund.refundId, at: refund.at.toISOString() }
  if (refund.amount === undefined || row.value === null) return { type: 'retraction', ...base }
  const left = Math.round((row.value - (row.refunded_value ?? 0)) * 100) / 100
  if (left <= 0) return { type: 'retraction', ...base }
  return { type: 'restatement', ...base, value: left, ...(row.currency ? { currency: row.currency } : {}) }
}

/** What the worker does with a claimed adjustment before any request: wait, skip, or send this item. */
export type AdjustmentStep = { wait: string } | { skip: string } | { item: AdjustmentEvent }

/** The conversion's own delivery decides: sent → send the refund; still on its way → wait; ended otherwise → skip. */
export function stepOf(row: ClaimedDelivery, conversion: ConversionEvent, platform: AdPlatformDefinition<unknown>, options: unknown, now = Date.now()): AdjustmentStep {
  const support = platform.adjustments
  if (!support) return { skip: notSupported(platform) }
  const stored = row.adjustment
  if (!stored) return { skip: 'the adjustment has no refund data' }
  if (row.conversion_status === 'pending' || row.conversion_status === 'retrying') return { wait: `waits until the conversion is delivered to ${labelOf(platform)}` }
  if (row.conversion_status !== 'sent') return { skip: notDelivered(platform, row.conversion_status ?? 'not found') }
  const days = (now - conversion.occurredAt.getTime()) / 86_400_000
  if (days > support.maxConversionAgeDays) {
    return { skip: `the conversion happened ${Math.floor(days)} days ago; ${labelOf(platform)} adjusts conversions at most ${support.maxConversionAgeDays} days old` }
  }
  const item: AdjustmentEvent = { conversion, adjustment: { ...stored, at: new Date(stored.at) } }
  const reason = support.skipReason?.(item, options)
  return reason ? { skip: reason } : { item }
}

/** The row's key: the vendor's refund id, or its SHA-256 when it is longer than the column (255). */
export function refundKey(refundId: string): string {
  return refundId.length <= 255 ? refundId : `sha256:${createHash('sha256').update(refundId).digest('hex')}`
}

export function labelOf(platform: Pick<AdPlatformDefinition<unknown>, 'label' | 'name'>): string {
  return platform.label ?? platform.name
}

function notSupported(platform: AdPlatformDefinition<unknown>): string {
  return `refund not sent: not supported by ${labelOf(platform)} (${platform.adjustmentsGap ?? 'its API documents no refund or negative value'})`
}

function notDelivered(platform: AdPlatformDefinition<unknown>, status: string): string {
  return `refund not sent: the conversion was not delivered to ${labelOf(platform)} (${status}), so there is nothing to adjust`
}
