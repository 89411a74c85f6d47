/**
 * Which of TikTok's event sources a conversion belongs to, and what each source takes. Events API 2.0 (README
 * "Event sources"): `web` events go to a pixel, `offline` events (in a physical store) to an Offline Event Set, `crm`
 * events (leads in a CRM) to a CRM Event Set; one `event_source` per request. Pure.
 */
import type { ConversionEvent } from '../../../core/delivery/types.ts'
import type { TikTokOptions } from './map.ts'

export type TikTokEventSource = 'web' | 'offline' | 'crm'

/** The `user` keys the reference lets each source carry (ttclid, ip and user_agent are for web events only). */
export const USER_KEYS_BY_SOURCE = {
  web: ['ttclid', 'email', 'phone', 'external_id', 'ip', 'user_agent'],
  offline: ['email', 'phone'],
  crm: ['email', 'phone', 'external_id'],
} as const satisfies Record<TikTokEventSource, readonly string[]>

/**
 * A sale in a store or by phone is an offline event; a lead that TikTok's lead form collected (it carries TikTok's
 * `tt_lead_id`) is a CRM event when the site set `crmEventSetId`; everything else is a web event.
 */
export function eventSourceOf(event: ConversionEvent, options: Pick<TikTokOptions, 'crmEventSetId'>): TikTokEventSource {
  if (event.channel === 'in_store' || event.channel === 'phone') return 'offline'
  if (options.crmEventSetId && event.clickIds.tt_lead_id) return 'crm'
  return 'web'
}

/** The `event_source_id` of a source: the pixel code, the Offline Event Set id or the CRM Event Set id. */
export function eventSourceIdOf(source: TikTokEventSource, options: TikTokOptions): string | undefined {
  return { web: options.pixelCode, offline: options.offlineEventSetId, crm: options.crmEventSetId }[source]
}

/** The core's request group: web events go in the pixel's request, offline and CRM events each in one of their own. */
export function requestGroupOf(event: ConversionEvent, options: TikTokOptions): string | undefined {
  const source = eventSourceOf(event, options)
  return source === 'web' ? undefined : source
}

/** Why an offline or CRM event cannot go to TikTok, or undefined. Web events are judged in map.ts. */
export function offlineOrCrmSkipReason(event: ConversionEvent, source: 'offline' | 'crm', options: TikTokOptions, limitedUse: boolean): string | undefined {
  const what = event.channel === 'phone' ? 'a sale by phone' : event.channel === 'in_store' ? 'a sale in a store' : 'a lead from TikTok\'s lead form'
  if (source === 'offline' && !options.offlineEventSetId) {
    return `${what} is an offline event for TikTok: set offlineEventSetId (the Offline Event Set id from Events Manager) in the tiktok destination to send it`
  }
  // The reference lets only web and app events carry limited_data_use: without it, the event is not sent at all.
  if (limitedUse) return `${what} goes to TikTok as ${source === 'offline' ? 'an offline' : 'a CRM'} event, which cannot carry limited_data_use (web and app events only), and the person opted out or denied ad user data, so it is not sent`
  return undefined
}
