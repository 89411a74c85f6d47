/**
 * Whether one platform takes one conversion event, and in which request group: the outbox asks it before every send,
 * and the dashboard's Setup page asks it of a sample event per event and platform, so the page explains exactly the
 * skips the deliveries will record (a Google event without a conversion action, an event past the platform's window).
 */
import { ATP_IDS } from '../consent/ac.ts'
import type { AdPlatformDefinition } from '../registry.ts'
import type { ConversionEvent } from './types.ts'

export type PlatformVerdict =
  /** Sent, in the request group `group` (undefined: the account's usual request). */
  | { kind: 'send', group?: string }
  /** Recorded skipped, never sent: the reason is the delivery's `error`. */
  | { kind: 'skip', reason: string }
  /** The adapter threw while judging the event: a bug, the delivery ends failed so it can be replayed once fixed. */
  | { kind: 'broken', reason: string }

export function platformVerdict(platform: AdPlatformDefinition<unknown>, options: unknown, event: ConversionEvent, now = Date.now()): PlatformVerdict {
  let skip: string | undefined
  let group: string | undefined
  try {
    skip = platform.skipReason?.(event, options)
    group = skip ? undefined : platform.requestGroup?.(event, options)
  }
  catch (error) {
    return { kind: 'broken', reason: `adapter ${platform.name} could not check the event: ${error instanceof Error ? error.message : String(error)}` }
  }
  if (skip) return { kind: 'skip', reason: skip }
  // Refused as a vendor: by the TC string (its GVL id had no consent) or the Additional Consent string (core/consent).
  if (event.consent.vendorsDenied?.includes(platform.name)) return { kind: 'skip', reason: vendorRefusal(platform.name) }
  // Past the platform's event-age window (a long outage, a lead released too late): recorded, not sent to be refused.
  skip = tooOld(event.occurredAt, platform.maxEventAgeDays, platform.name, now)
  if (skip) return { kind: 'skip', reason: skip }
  return group ? { kind: 'send', group } : { kind: 'send' }
}

function tooOld(occurredAt: Date, maxDays: number | undefined, platform: string, now: number): string | undefined {
  if (maxDays === undefined) return undefined
  const days = (now - occurredAt.getTime()) / 86_400_000
  if (days <= maxDays) return undefined
  return `the conversion happened ${Math.floor(days)} days ago; ${platform} takes events at most ${maxDays} days old`
}

/** Why a platform the visitor refused as a TCF vendor is skipped. */
export function vendorRefusal(platform: string): string {
  // A Google ad tech provider outside the GVL is refused in the Additional Consent string, a GVL vendor in the TC string.
  return platform in ATP_IDS ? `the visitor's Additional Consent string gives ${platform} no consent`
    : `the visitor's TC string gives ${platform} no vendor consent`
}
