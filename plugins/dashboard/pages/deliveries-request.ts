/**
 * "The request as sent" on a delivery's detail view. dcgate does not store request bodies (the outbox keeps the
 * conversion, the status and the platform's message), so the request is rebuilt: the stored conversion through the
 * adapter's own pure toRequest, with the site's options, exactly as the worker builds it. Then it is redacted field by
 * field (request-redaction.ts): credentials, the buyer's IP address and user agent in clear or hashed, and URLs cut
 * to origin and path. Identity fields are SHA-256 hashes already. Headers the adapter's authorize step adds at send
 * time (OAuth) are not shown. A refund (an adjustment row) goes through the adapter's adjustment mapping, and a lead
 * qualified after the platform's window is rebuilt as it was sent then (core/delivery/late-lead.ts), both as the
 * worker does.
 */
import type { PluginContext } from '../../../core/plugin.ts'
import { readConversions } from '../../../core/delivery/queries/outbox.ts'
import { toEvent } from '../../../core/delivery/rows.ts'
import { asLateLead } from '../../../core/delivery/late-lead.ts'
import type { AdPlatformDefinition } from '../../../core/registry.ts'
import type { PlatformRequest } from '../../../core/delivery/types.ts'
import type { DeliveryDetailRow } from '../queries/deliveries.ts'
import { toShownRequest, type ShownRequest } from './request-redaction.ts'

export type RebuiltRequest = { request: ShownRequest } | { unavailable: string }

export async function rebuildRequest(
  ctx: Pick<PluginContext, 'prepared' | 'registry'>, siteId: string,
  delivery: Pick<DeliveryDetailRow, 'conversion_id' | 'provider' | 'kind' | 'adjustment' | 'updated_at'>,
): Promise<RebuiltRequest> {
  const configured = ctx.registry.forSite(siteId, 'ad-platform').find((c) => c.definition.name === delivery.provider)
  if (!configured) return { unavailable: `${delivery.provider} is no longer configured for this site, so its request cannot be rebuilt.` }
  const stored = (await readConversions(ctx.prepared, [delivery.conversion_id])).get(delivery.conversion_id)
  if (!stored) return { unavailable: 'The conversion is no longer stored (erased by a deletion request).' }
  const event = toEvent(stored)
  const platform = configured.definition as AdPlatformDefinition<unknown>
  let built: PlatformRequest
  try {
    if (delivery.kind === 'adjustment') {
      if (!platform.adjustments || !delivery.adjustment) return { unavailable: 'No refund request was sent to this platform (see the reason).' }
      const adjustment = { ...delivery.adjustment, type: delivery.adjustment.type as 'retraction' | 'restatement', at: new Date(delivery.adjustment.at) }
      built = platform.adjustments.toRequest([{ conversion: event, adjustment }], configured.options)
    }
    else {
      const late = asLateLead(event, stored, platform, Date.parse(delivery.updated_at))
      built = platform.toRequest([late?.event ?? event], configured.options)
    }
  }
  catch (error) {
    return { unavailable: `The ${delivery.provider} adapter cannot build this request: ${error instanceof Error ? error.message : String(error)}` }
  }
  return { request: toShownRequest(built, configured.options, event) }
}
