import { STANDARD_EVENTS, type SiteConfig } from '../config/schema.ts'
import type { StandardEvent } from './types.ts'

export type EventMapping =
  | { kind: 'mapped', standardEvent: StandardEvent, release: 'immediately' | 'when_qualified' }
  /** A site event that sends as nothing: stored, delivered nowhere. */
  | { kind: 'unmapped' }
  /** Neither a standard event nor one of the site's active events. */
  | { kind: 'unknown' }

/** Standard names map to themselves; a site's active events map through `sendsAs`. */
export function resolveEvent(site: SiteConfig, event: string): EventMapping {
  const own = site.events.find((e) => e.key === event && e.active)
  if (own) return own.sendsAs ? { kind: 'mapped', standardEvent: own.sendsAs, release: own.release } : { kind: 'unmapped' }
  if ((STANDARD_EVENTS as readonly string[]).includes(event)) return { kind: 'mapped', standardEvent: event as StandardEvent, release: 'immediately' }
  return { kind: 'unknown' }
}
