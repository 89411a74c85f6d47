import { randomUUID } from 'node:crypto'
import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/**
 * One visit (browser session) of a site: the capture plugin writes it in batches, intake reads it to recover
 * click ids and the bot/consent verdict for server-side conversions. The personal columns (ip, user agent,
 * email, phone, names, device hash) are erasable; the rest describes the visit, not the person.
 */
export const Visit = defineEntity({
  name: 'Visit',
  tableName: 'visits',
  uniques: [{ properties: ['siteId', 'sessionId'] }],
  indexes: [
    { properties: ['siteId', 'emailHash'] },
    // Conversion matching and erasure find a visit by any identity it was given; only identified visits are indexed.
    { name: 'visits_email_hashes_index', expression: 'create index "visits_email_hashes_index" on "visits" using gin ("email_hashes") where "email_hashes" is not null' },
    { properties: ['siteId', 'startedAt', 'id'] },
    // The export's detection lists page over these visits only (plugins/export): one range scan per page however rare they are.
    { name: 'visits_bot_paging_index', expression: 'create index "visits_bot_paging_index" on "visits" ("site_id", "started_at", "id") where "is_bot"' },
    { name: 'visits_vpn_proxy_paging_index', expression: 'create index "visits_vpn_proxy_paging_index" on "visits" ("site_id", "started_at", "id") where "is_vpn" or "is_proxy" or "is_tor"' },
  ],
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()),
    siteId: p.string().length(64),
    /** The dc_session_id the tracking script sends. */
    sessionId: p.string().length(128),
    /** The script's long-lived first-party visitor id. */
    visitorId: p.string().length(64).nullable(),
    startedAt: p.datetime(6).defaultRaw('now()').onCreate(() => new Date()),
    endedAt: p.datetime(6).nullable(),
    durationMs: p.bigint('number').default(0),
    pageCount: p.integer().default(0),
    eventCount: p.integer().default(0),
    /** SHA-256 of the normalised email the visitor identified with last. */
    emailHash: p.string().length(64).nullable(),
    /**
     * SHA-256 of every normalised email the visit was identified with (at most 20), in order: how email matching and
     * erasure find it, so a second identification does not hide the first.
     */
    emailHashes: p.array().nullable(),
    email: p.string().nullable(),
    phone: p.string().length(64).nullable(),
    firstName: p.string().nullable(),
    lastName: p.string().nullable(),
    identifiedAt: p.datetime(6).nullable(),
    clickIds: p.json<Record<string, string>>().defaultRaw(`'{}'::jsonb`),
    consent: p.string().length(16).default('unknown'),
    ipAddress: p.string().length(64).nullable(),
    userAgent: p.text().nullable(),
    country: p.string().length(2).nullable(),
    city: p.string().nullable(),
    isp: p.string().nullable(),
    organization: p.string().nullable(),
    asn: p.integer().nullable(),
    isVpn: p.boolean().default(false),
    isProxy: p.boolean().default(false),
    isTor: p.boolean().default(false),
    isHosting: p.boolean().default(false),
    platform: p.string().length(32).nullable(),
    browser: p.string().length(64).nullable(),
    os: p.string().length(64).nullable(),
    isBot: p.boolean().default(false),
    /** Short stable codes (plugins/capture/intel/README.md); empty for a person. */
    botReasons: p.json<string[]>().defaultRaw(`'[]'::jsonb`),
    referrer: p.text().nullable(),
    landingUrl: p.text().nullable(),
    /** The browser's device fingerprint (SHA-256 hex), erasable. */
    deviceHash: p.string().length(64).nullable(),
    updatedAt: p.datetime(6).defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
})
export type IVisit = InferEntity<typeof Visit>
