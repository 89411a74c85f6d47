/**
 * Late qualification (issue 18). A lead held "when qualified" may be released weeks after it was made, past a
 * platform's event-age window (7 days for Meta, TikTok, Reddit, Pinterest and Microsoft). Such a lead is not skipped
 * as too old: the qualification is the conversion the platform is told about, at the time it happened (the release),
 * as each platform documents for CRM-qualified leads. The delivery row keeps a note saying which rule applied.
 */
import type { AdPlatformDefinition } from '../registry.ts'
import { labelOf } from './adjust.ts'
import type { ConversionEvent } from './types.ts'

const DAY_MS = 86_400_000

/** What the worker knows of a stored conversion's release. */
export interface ReleaseFacts { state?: string, resolved_at?: Date | string | null }

/**
 * The event as it is sent, with the note for the report, when the lead was released and is older than the platform's
 * window while its qualification is not; undefined otherwise (the usual age check then applies).
 */
export function asLateLead(event: ConversionEvent, stored: ReleaseFacts | undefined, platform: Pick<AdPlatformDefinition<unknown>, 'name' | 'label' | 'maxEventAgeDays' | 'lateLeadRule'>, now = Date.now()): { event: ConversionEvent, note: string } | undefined {
  // No window (the vendor documents none): the lead is never late, it goes with the time it was made.
  if (stored?.state !== 'released' || !stored.resolved_at || platform.maxEventAgeDays === undefined) return undefined
  const releasedAt = new Date(stored.resolved_at)
  const maxMs = platform.maxEventAgeDays * DAY_MS
  if (now - event.occurredAt.getTime() <= maxMs || now - releasedAt.getTime() > maxMs) return undefined
  const days = Math.floor((releasedAt.getTime() - event.occurredAt.getTime()) / DAY_MS)
  const rule = platform.lateLeadRule ?? 'with the qualification time as event time'
  return {
    event: { ...event, occurredAt: releasedAt, qualifiedLate: { leadAt: event.occurredAt } },
    note: `sent ${rule} (the lead was qualified ${days} days after it was made; ${labelOf(platform)} takes events at most ${platform.maxEventAgeDays} days old)`,
  }
}
