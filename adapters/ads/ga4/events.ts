/**
 * Which GA4 event each standard event is sent as: GA4's recommended events where one exists (purchase,
 * generate_lead, sign_up); GA4 recommends none for a booking, so Schedule goes as the custom event `schedule`.
 */
import type { StandardEvent } from '../../../core/delivery/types.ts'

export const DEFAULT_EVENTS = {
  Purchase: 'purchase',
  Lead: 'generate_lead',
  CompleteRegistration: 'sign_up',
  Schedule: 'schedule',
} as const satisfies Record<StandardEvent, string>

/** GA4 event names: start with a letter, then letters, digits or `_`, at most 40 characters (reference "limitations"). */
export const EVENT_NAME = /^[A-Za-z]\w{0,39}$/

/** Names GA4 reserves (reference "reserved names"); a site may not map a standard event to one. */
export const RESERVED_EVENT_NAMES = [
  'ad_activeview', 'ad_click', 'ad_exposure', 'ad_query', 'ad_reward', 'adunit_exposure', 'app_background', 'app_clear_data',
  'app_exception', 'app_remove', 'app_store_refund', 'app_store_subscription_cancel', 'app_store_subscription_convert',
  'app_store_subscription_renew', 'app_update', 'app_upgrade', 'dynamic_link_app_open', 'dynamic_link_app_update',
  'dynamic_link_first_open', 'error', 'firebase_campaign', 'firebase_in_app_message_action', 'firebase_in_app_message_dismiss',
  'firebase_in_app_message_impression', 'first_open', 'first_visit', 'in_app_purchase', 'notification_dismiss',
  'notification_foreground', 'notification_open', 'notification_receive', 'os_update', 'session_start', 'session_start_with_rollout',
  'user_engagement',
] as const

/** Per-site overrides; `false` means "do not send this standard event to GA4". */
export type Ga4EventMapping = Partial<Record<StandardEvent, string | false>>

/** The GA4 event name for this standard event, or undefined when the site switched it off. */
export function ga4EventFor(standardEvent: StandardEvent, overrides: Ga4EventMapping | undefined): string | undefined {
  const chosen = overrides?.[standardEvent] ?? DEFAULT_EVENTS[standardEvent]
  return chosen === false ? undefined : chosen
}
