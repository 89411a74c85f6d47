/**
 * "The request as sent" on a delivery's detail view. dcgate does not store request bodies (the outbox keeps the
 * conversion, the status and the platform's message), so the request is rebuilt: the stored conversion through the
 * adapter's own pure toRequest, with the site's options, exactly as the worker builds it. Then it is redacted:
 * every credential of the options (a key named like a token, secret, key or password), the buyer's IP address and
 * user agent (sent in clear to some platforms while the delivery lasts), and headers that carry credentials. Identity
 * fields are SHA-256 hashes already. Headers the adapter's authorize step adds at send time (OAuth) are not shown.
 * A refund (an adjustment row) goes through the adapter's adjustment mapping, and a lead qualified after the platform's
 * window is rebuilt as it was sent then (core/delivery/late-lead.ts), both as the worker does.
 */
import type { PluginContext } from '../../../core/plugin.ts'
import { readConversions } from '../../../core/delivery/queries/outbox.ts'
import { toEvent } from '../../../core/delivery/rows.ts'
import { asLateLead } from '../../../core/delivery/late-lead.ts'
import type { AdPlatformDefinition } from '../../../core/registry.ts'
import type { PlatformRequest } from '../../../core/delivery/types.ts'
import type { DeliveryDetailRow } from '../queries/deliveries.ts'

export interface ShownRequest { method: string, url: string, headers: [string, string][], body: string }

export type RebuiltRequest = { request: ShownRequest } | { unavailable: string }

const REDACTED = '[redacted]'
const SECRET_OPTION = /token|secret|key|password|credential/i
const SECRET_HEADER = /^(authorization|cookie|x-api-key|api-key|x-goog-api-key|developer-token|x-dc-key)$/i

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
  const secrets = [...secretsOf(configured.options), event.ip, event.userAgent].filter((s): s is string => typeof s === 'string' && s.length >= 4)
  const redact = (text: string) => redactAll(text, secrets)
  return {
    request: {
      method: built.method,
      url: redact(built.url),
      headers: Object.entries(built.headers).map(([name, value]) => [name, SECRET_HEADER.test(name) ? REDACTED : redact(value)]),
      body: prettyJson(redact(built.body)),
    },
  }
}

/** Every string under a credential-like key of the options, at any depth. */
export function secretsOf(options: unknown, underSecret = false): string[] {
  if (typeof options === 'string') return underSecret ? [options] : []
  if (Array.isArray(options)) return options.flatMap((item) => secretsOf(item, underSecret))
  if (options && typeof options === 'object') {
    return Object.entries(options).flatMap(([key, value]) => secretsOf(value, underSecret || (SECRET_OPTION.test(key) && !/url$/i.test(key))))
  }
  return []
}

/** Replaces each secret as it stands, URL-encoded and JSON-escaped, longest first (one secret may contain another). */
export function redactAll(text: string, secrets: readonly string[]): string {
  const forms = new Set(secrets.flatMap((s) => [s, encodeURIComponent(s), JSON.stringify(s).slice(1, -1)]))
  let out = text
  for (const form of [...forms].sort((a, b) => b.length - a.length)) out = out.split(form).join(REDACTED)
  return out
}

function prettyJson(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2)
  }
  catch {
    return body
  }
}
