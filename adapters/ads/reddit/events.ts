/**
 * Which Reddit conversion event each standard event is sent as. Reddit has standard event types (v3 spells them in
 * UPPER_SNAKE_CASE) and custom events (`CUSTOM` plus a free-form name); a site may override any default or switch
 * an event off with `false`.
 */
import type { StandardEvent } from '../../../core/delivery/types.ts'

/** Reddit's v3 standard `type.tracking_type` values (CUSTOM is written as `{ custom: name }`). */
export const TRACKING_TYPES = ['PAGE_VISIT', 'VIEW_CONTENT', 'SEARCH', 'ADD_TO_CART', 'ADD_TO_WISHLIST', 'PURCHASE', 'LEAD', 'SIGN_UP'] as const
export type TrackingType = typeof TRACKING_TYPES[number]

/** A standard Reddit event, or a custom one by name (case-sensitive, at most 64 characters). */
export type RedditEvent = TrackingType | { custom: string }

/** Per-site overrides; `false` means "do not send this standard event to Reddit". */
export type RedditEventMapping = Partial<Record<StandardEvent, RedditEvent | false>>

export const CUSTOM_EVENT_NAME_MAX = 64

/** Reddit has no standard event for booking, so Schedule goes as a custom event of that name. */
export const DEFAULT_EVENTS = {
  Purchase: 'PURCHASE',
  Lead: 'LEAD',
  CompleteRegistration: 'SIGN_UP',
  Schedule: { custom: 'Schedule' },
} as const satisfies Record<StandardEvent, RedditEvent>

/** What goes in an event's `type`. */
export type RedditEventType = { tracking_type: TrackingType } | { tracking_type: 'CUSTOM', custom_event_name: string }

/** The Reddit event for this standard event, or undefined when the site switched it off. */
export function redditEventFor(standardEvent: StandardEvent, overrides: RedditEventMapping | undefined): RedditEventType | undefined {
  const chosen = overrides?.[standardEvent] ?? DEFAULT_EVENTS[standardEvent]
  if (chosen === false) return undefined
  return typeof chosen === 'string' ? { tracking_type: chosen } : { tracking_type: 'CUSTOM', custom_event_name: chosen.custom }
}

/**
 * Event metadata Reddit takes per type (its "about event metadata" article, as RudderStack and Segment apply it):
 * value and currency on revenue-bearing types, item count and products on basket types.
 */
const TAKES_VALUE = new Set(['ADD_TO_CART', 'ADD_TO_WISHLIST', 'PURCHASE', 'LEAD', 'SIGN_UP', 'CUSTOM'])
const TAKES_ITEMS = new Set(['ADD_TO_CART', 'ADD_TO_WISHLIST', 'PURCHASE', 'CUSTOM'])

export function takesValue(type: RedditEventType): boolean {
  return TAKES_VALUE.has(type.tracking_type)
}

export function takesItems(type: RedditEventType): boolean {
  return TAKES_ITEMS.has(type.tracking_type)
}
