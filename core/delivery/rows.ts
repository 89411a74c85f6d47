import type { AppliedConsent, ConsentPurposes } from '../consent/purposes.ts'
import { columnsOf } from '../db/columns.ts'
import { normalizeCountry, normalizeEmail } from '../identity/normalize.ts'
import type { DeliveryPlan, UsPrivacyDecision } from './decide.ts'
import type { VisitMatch } from './match.ts'
import type { AcceptMeta } from './pipeline.ts'
import type { Trust } from './trust.ts'
import type { Channel, ClearTraits, ClickIds, Confirmation, ConsentState, ConversionEvent, ConversionInput, ConversionItem, HashedIdentity, StandardEvent } from './types.ts'

/** A new row of `conversions`, as the intake writes it (the id is the database's). */
export interface ConversionRow {
  site_id: string
  message_id: string
  trust: Trust
  /** The intake route or webhook source (automation, shopify, …). */
  source: string
  source_event_type: string
  event: string
  standard_event: string | null
  state: 'accepted' | 'unmapped' | 'held'
  occurred_at: Date
  value: number | null
  currency: string | null
  order_id: string | null
  channel: Channel
  items: ConversionItem[]
  identity: HashedIdentity
  click_ids: ClickIds
  user_id: string | null
  anonymous_id: string | null
  session_id: string | null
  page_url: string | null
  ip: string | null
  user_agent: string | null
  consent: ConsentState
  is_bot: boolean
  confirmation: Confirmation
  country: string | null
  content_name: string | null
  content_category: string | null
  /** A held conversion's normalised email, so a release by event and email finds it. */
  held_email: string | null
  /** The US state opt-out and the site's mode for it (decide.ts); undefined, bound as SQL NULL, when none applies. */
  us_privacy: UsPrivacyDecision | undefined
  /** Personal fields a connected platform takes in clear; erased with ip and user_agent (clear-fields.ts). */
  clear_traits: ClearTraits | null
  /** The consent per purpose that applied and the rule that chose it (core/consent/purposes.ts). */
  consent_purposes: AppliedConsent
}

export const CONVERSION_COLUMNS = columnsOf<ConversionRow>()([
  ['site_id', 'text'], ['message_id', 'text'], ['trust', 'text'], ['source', 'text'], ['source_event_type', 'text'],
  ['event', 'text'], ['standard_event', 'text'], ['state', 'text'], ['occurred_at', 'timestamptz'], ['value', 'double'],
  ['currency', 'text'], ['order_id', 'text'], ['channel', 'text'], ['items', 'jsonb'], ['identity', 'jsonb'],
  ['click_ids', 'jsonb'], ['user_id', 'text'], ['anonymous_id', 'text'], ['session_id', 'text'], ['page_url', 'text'],
  ['ip', 'text'], ['user_agent', 'text'], ['consent', 'text'], ['is_bot', 'boolean'], ['confirmation', 'text'],
  ['country', 'text'], ['content_name', 'text'], ['content_category', 'text'], ['held_email', 'text'], ['us_privacy', 'jsonb'],
  ['clear_traits', 'jsonb'],
  ['consent_purposes', 'jsonb'],
])

/** What every outbox row of a new conversion shares; one row is written per provider. */
export interface DeliveryRow {
  status: 'pending' | 'skipped'
  /** Why it is skipped. */
  error: string | null
  /** 1 when this process claims the rows for an inline attempt: counted at once, so one cut by a crash shows. */
  attempts: 0 | 1
  /** Seconds the inline claim lasts (delivery.leaseSeconds); null when the worker delivers. */
  locked_until: number | null
  /** Seconds before the first attempt is due (a public conversion's grace). */
  next_attempt_at: number
}

export const DELIVERY_COLUMNS = columnsOf<DeliveryRow>()([
  ['status', 'text'], ['error', 'text'], ['attempts', 'int'], ['locked_until', 'seconds_from_now'], ['next_attempt_at', 'seconds_from_now'],
])

/** The conversion row for a new conversion, from what the pipeline learnt and decided. */
export function toConversionRow(
  input: ConversionInput, meta: AcceptMeta, plan: DeliveryPlan,
  known: { siteId: string, messageId: string, identity: HashedIdentity, clickIds: ClickIds, match: VisitMatch, siteUrl?: string, clearTraits?: ClearTraits },
): ConversionRow {
  const ids = input.identifiers ?? {}
  const first = input.items?.[0]
  // A sale in a store or by phone happened off the web: it borrows no page or browser from a visit or the site.
  const web = (input.channel ?? 'online') === 'online' || input.channel === 'bopis'
  return {
    site_id: known.siteId,
    message_id: known.messageId,
    trust: meta.trust,
    source: meta.source,
    source_event_type: meta.sourceEventType ?? meta.source,
    event: input.event,
    standard_event: plan.standardEvent,
    state: plan.state,
    occurred_at: input.occurredAt ?? new Date(),
    value: input.value ?? null,
    currency: input.currency ?? null,
    order_id: input.orderId ?? null,
    channel: input.channel ?? 'online',
    items: input.items ?? [],
    identity: known.identity,
    click_ids: known.clickIds,
    user_id: input.userId ?? ids.customer_id ?? null,
    anonymous_id: input.anonymousId ?? null,
    session_id: ids.dc_session_id ?? null,
    // Web context: the conversion's own, else the newest matched visit's, else the site's URL. Stored, so the worker
    // sends what the inline attempt sent.
    page_url: input.pageUrl ?? (web ? known.match.landingUrl ?? known.siteUrl : undefined) ?? null,
    ip: plan.keepsBrowser ? input.ip ?? null : null,
    user_agent: plan.keepsBrowser ? input.userAgent ?? (web ? known.match.userAgent : undefined) ?? null : null,
    consent: known.match.consent,
    is_bot: known.match.isBot,
    confirmation: meta.confirmation,
    country: normalizeCountry(input.traits?.country)?.toUpperCase() ?? null,
    content_name: input.contentName ?? first?.name ?? null,
    content_category: input.contentCategory ?? first?.category ?? null,
    held_email: plan.state === 'held' ? normalizeEmail(input.traits?.email) ?? null : null,
    us_privacy: plan.usPrivacy,
    // Like IP and browser: only for a conversion some platform will be sent.
    clear_traits: plan.keepsBrowser ? known.clearTraits ?? null : null,
    consent_purposes: plan.consent,
  }
}

/** The site's URL from its first configured domain (`https://<domain>/`), or undefined when it names none. */
export function siteUrlOf(site: { config: { domains?: readonly string[] } }): string | undefined {
  const domain = site.config.domains?.[0]
  return domain ? `https://${domain}/` : undefined
}

/** The outbox rows written with the conversion: skipped by a gate, claimed for an inline attempt, or due later. */
export function toDeliveryRow(plan: DeliveryPlan, leaseSeconds: number): DeliveryRow {
  return {
    status: plan.skipReason ? 'skipped' : 'pending',
    error: plan.skipReason ?? null,
    attempts: plan.inline ? 1 : 0,
    locked_until: plan.inline ? leaseSeconds : null,
    next_attempt_at: plan.graceSeconds,
  }
}

/** The fields of a stored (or about to be stored) conversion that adapters see. */
export type EventFields = Pick<ConversionRow, 'site_id' | 'message_id' | 'trust' | 'event' | 'value' | 'currency' | 'order_id' | 'channel'
  | 'items' | 'identity' | 'click_ids' | 'ip' | 'user_agent' | 'page_url' | 'consent' | 'confirmation'>
  & { standard_event: string | null, occurred_at: Date | string, us_privacy?: UsPrivacyDecision | null, clear_traits?: ClearTraits | null, country?: string | null, consent_purposes?: AppliedConsent | null }

/** A conversion as adapters see it: the row just written (an inline attempt) or read back (the worker). */
export function toEvent(row: EventFields): ConversionEvent {
  const consent = row.consent as ConsentState
  return {
    // The platforms' dedup key, for every tier: the id the site's own pixel and tag send for the same event.
    messageId: row.message_id,
    siteId: row.site_id,
    event: row.event,
    standardEvent: row.standard_event as StandardEvent,
    occurredAt: new Date(row.occurred_at),
    value: row.value ?? undefined,
    currency: row.currency ?? undefined,
    orderId: row.order_id ?? undefined,
    items: row.items,
    channel: row.channel as Channel,
    identity: row.identity,
    clickIds: row.click_ids,
    ip: row.ip ?? undefined,
    userAgent: row.user_agent ?? undefined,
    pageUrl: row.page_url ?? undefined,
    ...(row.clear_traits ? { clear: { ...row.clear_traits, ...(row.country ? { countryCode: row.country } : {}) } } : {}),
    consent: toEventConsent(consent, row.consent_purposes?.purposes),
    ...(row.us_privacy?.mode === 'limited' ? { limitedDataUse: toLimitedDataUse(row.us_privacy) } : {}),
    confirmation: row.confirmation as Confirmation,
  }
}

/** The platforms' limited-data-use location: the country and state when known; without them the platform locates the person. */
function toLimitedDataUse({ country, state }: UsPrivacyDecision): NonNullable<ConversionEvent['limitedDataUse']> {
  return { ...(country ? { country } : {}), ...(state ? { state } : {}) }
}

/**
 * What adapters see of consent: the purposes that applied when there were any (an unsaid purpose falls back on the
 * visit's one-bit choice), and the platforms a TC string refused as vendors.
 */
function toEventConsent(choice: ConsentState, purposes: ConsentPurposes | undefined): ConversionEvent['consent'] {
  return {
    adUserData: purposes?.ad_user_data ?? choice,
    adPersonalization: purposes?.ad_personalization ?? choice,
    ...(purposes?.vendors_denied?.length ? { vendorsDenied: purposes.vendors_denied } : {}),
  }
}
