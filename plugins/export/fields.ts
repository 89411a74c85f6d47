import * as v from 'valibot'

/**
 * The records each export list answers, field by field as the spec names them (docs/api/export.md has the same
 * table with the meaning of each). These schemas document the responses in /openapi.json.
 */
const str = (description: string) => v.pipe(v.string(), v.description(description))
const maybe = (description: string) => v.pipe(v.nullable(v.string()), v.description(description))
const bool = (description: string) => v.pipe(v.boolean(), v.description(description))
const int = (description: string) => v.pipe(v.number(), v.integer(), v.description(description))
const time = (description: string) => v.pipe(v.string(), v.description(`${description} (ISO 8601, UTC, microseconds)`))
const reasons = v.pipe(v.array(v.string()), v.description('Short stable codes of why the visit was ruled a bot; empty for a person'))

export const SessionRecord = v.object({
  session_id: str('The tracking script\'s session id (dc_session_id)'),
  start_time: time('Time of the visit\'s first hit; the paging time'),
  end_time: v.pipe(v.nullable(v.string()), v.description('Time of its last hit; null before any hit was written')),
  duration_ms: int('end_time less start_time'),
  page_count: int('Page views'),
  country: maybe('Two-letter country of the IP address'),
  city: maybe('City of the IP address'),
  ip_address: maybe('The visitor\'s IP address; null when not kept (no consent) or erased'),
  is_vpn: bool('The IP address belongs to a VPN provider'),
  is_proxy: bool('The IP address is a known proxy'),
  is_tor: bool('The IP address is a Tor exit node'),
  user_agent: maybe('The browser\'s user agent'),
  platform: maybe('From the user agent: desktop, mobile, tablet, …, bot'),
  is_bot: bool('The visit was ruled a bot'),
  bot_reasons: reasons,
  referrer: maybe('Referrer of the first page view'),
  landing_url: maybe('URL of the first page view'),
  consent_purposes: v.pipe(v.nullable(v.object({
    source: v.string(),
    measurement: v.optional(v.string()),
    advertising: v.optional(v.string()),
    ad_user_data: v.optional(v.string()),
    ad_personalization: v.optional(v.string()),
    vendors_denied: v.optional(v.array(v.string())),
    us_opt_out: v.optional(v.boolean()),
  })), v.description('The visitor\'s consent per purpose (granted or denied) and the tool that asked (tcf, consent-mode, gpp, banner, manual); null when none said')),
})

export const BotDetectionRecord = v.object({
  session_id: str('The visit\'s session id'),
  bot_reasons: reasons,
  user_agent: maybe('The browser\'s user agent'),
  country: maybe('Two-letter country of the IP address'),
  ip_address: maybe('The visitor\'s IP address'),
  is_vpn: bool('The IP address belongs to a VPN provider'),
  is_proxy: bool('The IP address is a known proxy'),
  detected_at: time('The visit\'s start time; the paging time'),
})

export const VpnProxyDetectionRecord = v.object({
  session_id: str('The visit\'s session id'),
  ip_address: maybe('The visitor\'s IP address'),
  is_vpn: bool('The IP address belongs to a VPN provider'),
  is_proxy: bool('The IP address is a known proxy'),
  is_tor: bool('The IP address is a Tor exit node'),
  isp: maybe('Network (ASN) name of the IP address'),
  organization: maybe('Organisation the IP address is registered to'),
  country: maybe('Two-letter country of the IP address'),
  detected_at: time('The visit\'s start time; the paging time'),
})

export const IdentifiedUserRecord = v.object({
  id: str('Record id (UUID)'),
  email: str('The email address, normalised'),
  source: str('client_sdk (dcutils.identifyUser) or form (a mapped form)'),
  email_risk_score: v.pipe(v.nullable(v.number()), v.description('0 to 100; null until the email-risk plugin scored it')),
  email_risk_label: maybe('The risk verdict; null until scored'),
  is_disposable: v.pipe(v.nullable(v.boolean()), v.description('A disposable-email domain; null until checked')),
  ip_country: maybe('Two-letter country of the IP address at identification'),
  ip_is_vpn: bool('The IP address at identification belonged to a VPN provider'),
  identified_at: time('When the person was first identified on this site; the paging time'),
})

export const ConversionRecord = v.object({
  id: str('The conversion\'s id (UUID)'),
  validated: v.pipe(v.literal(true), v.description('Passed the bot and consent gates; always true in this list')),
  event_name: str('The standard event it was delivered as (Purchase, Lead, CompleteRegistration, Schedule)'),
  provider: str('The platform of the delivery this row comes from (meta, google_ads, …)'),
  value: v.pipe(v.nullable(v.number()), v.description('Conversion value; null when none was sent')),
  currency: maybe('Three-letter currency code'),
  order_id: maybe('Order id; rows are folded to one per order id'),
  country: maybe('Two-letter country of the buyer'),
  has_consent: bool('The visitor granted consent on the site\'s banner (false when no consent signal exists)'),
  refunded: bool('The order was refunded, in part or in full, or cancelled (a shop or payment webhook, or the automation route said so)'),
  refunded_at: v.pipe(v.nullable(v.string()), v.description('When its first refund or cancellation was made (ISO 8601, UTC, microseconds); null when none. `value` stays the amount sold: a partial refund does not lower it')),
  refunded_value: v.pipe(v.nullable(v.number()), v.description('The amount refunded so far, in `currency`, at most `value` (a cancellation or full refund: all of it); null when none. `value` minus this is what the sale is still worth')),
  confirmation: v.pipe(v.picklist(['payment_confirmed', 'crm_qualified', 'tracked']), v.description('Confirmation tier')),
  http_status: v.pipe(v.nullable(v.number()), v.description('HTTP status the platform answered the delivery with')),
  created_at: time('When the delivery was logged (for a conversion held until qualified: its release); the paging time'),
  delivery_id: str('Id of the delivery this row comes from (UUID), as in the delivery report'),
  source_event_type: maybe('What produced it: the webhook topic (orders/paid, …) or the route (automation, pixel, …)'),
  session_id: maybe('The visit\'s session id, when matched'),
  user_id: maybe('Your user id, as sent with the conversion'),
  content_name: maybe('Product or content name'),
  content_category: maybe('Product or content category'),
  events_received: int('Platforms that received it: sent deliveries of this conversion'),
})

export const EventRecord = v.object({
  key: str('Value to send as `event` when posting a conversion'),
  name: str('Human-readable label'),
  source: v.pipe(v.picklist(['standard', 'site']), v.description('standard: built in; site: the site\'s own active custom event')),
  sends_as: v.pipe(v.nullable(v.string()), v.description('The standard conversion it maps to; null if unmapped')),
})
