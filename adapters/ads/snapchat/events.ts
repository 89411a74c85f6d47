/**
 * Which Snapchat event each standard event is sent as, in Snap's own names (Conversions API "Parameters", server
 * parameters `event_name`). Snap has no lead event: Lead goes as CUSTOM_EVENT_1, and a booking as RESERVE.
 */
import type { StandardEvent } from '../../../core/delivery/types.ts'

export const SNAP_EVENTS = [
  'PAGE_VIEW', 'VIEW_CONTENT', 'ADD_CART', 'SIGN_UP', 'SAVE', 'START_CHECKOUT', 'ADD_BILLING', 'PURCHASE', 'SEARCH',
  'SUBSCRIBE', 'AD_CLICK', 'AD_VIEW', 'COMPLETE_TUTORIAL', 'LEVEL_COMPLETE', 'INVITE', 'LOGIN', 'SHARE', 'RESERVE',
  'ACHIEVEMENT_UNLOCKED', 'ADD_TO_WISHLIST', 'SPENT_CREDITS', 'RATE', 'START_TRIAL', 'LIST_VIEW',
  'CUSTOM_EVENT_1', 'CUSTOM_EVENT_2', 'CUSTOM_EVENT_3', 'CUSTOM_EVENT_4', 'CUSTOM_EVENT_5',
] as const
export type SnapEvent = typeof SNAP_EVENTS[number]

export const DEFAULT_EVENTS = {
  Purchase: 'PURCHASE',
  Lead: 'CUSTOM_EVENT_1',
  CompleteRegistration: 'SIGN_UP',
  Schedule: 'RESERVE',
} as const satisfies Record<StandardEvent, SnapEvent>

/** Per-site overrides; `false` means "do not send this standard event to Snapchat". */
export type SnapEventMapping = Partial<Record<StandardEvent, SnapEvent | false>>

export function snapEventFor(standardEvent: StandardEvent, overrides: SnapEventMapping | undefined): SnapEvent | undefined {
  const chosen = overrides?.[standardEvent] ?? DEFAULT_EVENTS[standardEvent]
  return chosen === false ? undefined : chosen
}
