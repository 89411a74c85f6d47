import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import type { AppliedConsent } from '../../consent/purposes.ts'
import type { UsPrivacyDecision } from '../decide.ts'
import type { ClearTraits, ClickIds, ConversionItem, HashedIdentity } from '../types.ts'

/**
 * An accepted conversion. Personal data is stored only as hashes (`identity`); the buyer's IP and user
 * agent, which some platforms need in clear, are kept only until every delivery has ended, then cleared.
 */
export const Conversion = defineEntity({
  name: 'Conversion',
  tableName: 'conversions',
  // A messageId is unique per trust tier: a public (pixel, unsigned webhook) row cannot occupy a trusted one's id.
  // message_id before trust, so the intake's lookup by (site, messageId) uses the index too.
  uniques: [{ properties: ['siteId', 'messageId', 'trust'] }],
  indexes: [
    { properties: ['siteId', 'createdAt', 'id'] },
    // Held leads by email and event, for the release plugin; partial, so the conversions not held take no entry.
    { name: 'conversions_held_index', expression: 'create index "conversions_held_index" on "conversions" ("site_id", "held_email", "event") where "state" = \'held\'' },
    // The export folds conversions that share an order id into one row (plugins/export).
    { properties: ['siteId', 'orderId'] },
    // The conversions still holding clear fields, for the erasure once their retry window has passed (clear-fields.ts).
    // Conversions whose inline attempt holds deliveries not written yet, for the worker's sweep (core/delivery/queries/inline.ts).
    { name: 'conversions_inline_index', expression: 'create index "conversions_inline_index" on "conversions" ("inline_until") where "inline_until" is not null' },
    { name: 'conversions_clear_fields_index', expression: 'create index "conversions_clear_fields_index" on "conversions" ("created_at") where ip is not null or user_agent is not null or clear_traits is not null' },
  ],
  properties: {
    id: p.uuid().primary(),
    siteId: p.string().length(64),
    messageId: p.string().length(255),
    /**
     * `trusted` (private-key intake, a verified webhook) or `public` (the tracking script, an unsigned webhook). A
     * public conversion is sent to the platforms under a distinct event id (core/delivery/trust.ts).
     */
    trust: p.string().length(16).default('trusted'),
    source: p.string().length(64),
    event: p.string(),
    /** Standard event it is delivered as; null when the event is unknown or unmapped. */
    standardEvent: p.string().length(32).nullable(),
    occurredAt: p.datetime(6),
    value: p.double().nullable(),
    currency: p.string().length(3).nullable(),
    orderId: p.string().nullable(),
    channel: p.string().length(16),
    items: p.json<ConversionItem[]>().defaultRaw(`'[]'::jsonb`),
    identity: p.json<HashedIdentity>().defaultRaw(`'{}'::jsonb`),
    clickIds: p.json<ClickIds>().defaultRaw(`'{}'::jsonb`),
    userId: p.string().nullable(),
    anonymousId: p.string().nullable(),
    sessionId: p.string().length(128).nullable(),
    pageUrl: p.text().nullable(),
    ip: p.string().length(64).nullable(),
    userAgent: p.text().nullable(),
    /** Personal fields a connected platform takes in clear (core/delivery/types.ts ClearTraits); erased with ip and userAgent. */
    clearTraits: p.json<ClearTraits>().nullable(),
    /** When IP and user agent were erased (every delivery ended, or the retry window passed); a retry after it is refused. */
    clearErasedAt: p.datetime(6).nullable(),
    /** From the matched visit: granted, denied or unknown (server-side conversions with no visit). */
    consent: p.string().length(16).default('unknown'),
    isBot: p.boolean().default(false),
    confirmation: p.string().length(32),
    /** The webhook event type it came from (orders/paid, payment_intent.succeeded), or the route name. */
    sourceEventType: p.string().length(64).nullable(),
    /** Two-letter country of the buyer, from the traits; the export reports it. */
    country: p.string().length(2).nullable(),
    contentName: p.string().length(500).nullable(),
    contentCategory: p.string().length(255).nullable(),
    /** A held conversion's email, normalised, so a release by event and email finds it; erasable, cleared on release. */
    heldEmail: p.string().nullable(),
    /** When a held conversion was released, dropped or expired. */
    resolvedAt: p.datetime(6).nullable(),
    /** accepted | unmapped | held → released | dropped | expired */
    state: p.string().length(16),
    /** A US state opt-out and the site's consent.usPrivacy applied to it ({ mode, signal, country?, state? }); null when none. */
    usPrivacy: p.json<UsPrivacyDecision>().nullable(),
    /** The consent per purpose that applied and the rule that chose it (core/consent/purposes.ts); null before it was kept. */
    consentPurposes: p.json<AppliedConsent>().nullable(),
    /** When the first refund or cancellation of this order was recorded (core/delivery/queries/refunds.ts); null when none. */
    refundedAt: p.datetime(6).nullable(),
    /** The amount refunded so far, in the conversion's currency; a cancellation or a refund with no amount refunds the whole value. */
    refundedValue: p.double().nullable(),
    /** The refund ids already counted, so a retried webhook does not count a refund twice. */
    refundIds: p.array().columnType('text[]').nullable(),
    /**
     * The deliveries its inline attempt holds (id and platform each), written as rows once, in their final state, by
     * the attempt's record; null when none is under way. Readers that must see them read `all_deliveries`.
     */
    inlineDeliveries: p.json<{ id: string, provider: string }[]>().nullable(),
    /** That attempt's lease: once it has passed, the worker's sweep writes them as pending rows for a retry. */
    inlineUntil: p.datetime(6).nullable(),
    createdAt: p.datetime(6).defaultRaw('now()'),
  },
})
export type IConversion = InferEntity<typeof Conversion>
