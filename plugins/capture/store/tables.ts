import { p } from '@mikro-orm/core'
import type { ConsentPurposes } from '../../../core/consent/purposes.ts'
import type { Column, Computed, WireType } from './columns.ts'

/**
 * Each table capture writes, declared once as its columns in order: the row types (rows.ts), the SQL (queries.ts),
 * the row writers and readers (pending.ts) and the entities capture owns (entities.ts) are made from these lists.
 * The order of a batched table's columns is the journal's format: add a column at the end.
 */

function column<Value>(type: WireType, sql: Pick<Column, 'entity' | 'update' | 'insert'> = {}): Column<Value> {
  return { type, ...sql }
}


export const EVENT_COLUMNS = {
  id: column<string>('uuid', { entity: p.uuid().primary() }),
  site_id: column<string>('text', { entity: p.string().length(64) }),
  /** Null for a hit counted without identifiers (consent required and not given). */
  session_id: column<string | null>('text', { entity: p.string().length(128).nullable(), update: 'latest' }),
  kind: column<'pageview' | 'event'>('text', { entity: p.string().length(16) }),
  name: column<string | null>('text', { entity: p.string().nullable() }),
  url: column<string>('text', { entity: p.text(), update: 'latest' }),
  referrer: column<string | null>('text', { entity: p.text().nullable(), update: 'latest' }),
  title: column<string | null>('text', { entity: p.string().length(500).nullable() }),
  props: column<Record<string, unknown> | null>('jsonb', { entity: p.json<Record<string, unknown>>().nullable() }),
  /** The browser's clock, clamped to the receive time when it runs ahead. */
  occurred_at: column<number>('epoch_ms', { entity: p.datetime(6) }),
  /** The partition key (page_events is partitioned by day of arrival), so part of the primary key. */
  received_at: column<number>('epoch_ms', { entity: p.datetime(6).primary() }),
}

/** The visit as one request saw it; merged into the stored row (counts add up, the first landing page stays). */
export const VISIT_COLUMNS = {
  site_id: column<string>('text', { entity: p.string().length(64) }),
  /** The dc_session_id the tracking script sends. */
  session_id: column<string>('text', { entity: p.string().length(128) }),
  /** The script's long-lived first-party visitor id. */
  visitor_id: column<string | null>('text', { entity: p.string().length(64).nullable(), update: 'newer' }),
  // The visit spans its stored hits, this row, and the events the same statement inserted (`c`).
  started_at: column<number>('epoch_ms', {
    entity: p.datetime(6).defaultRaw('now()'),
    insert: 'least(s.started_at, c.first_at)',
    update: { sql: 'least(v.started_at, excluded.started_at)' },
  }),
  ended_at: column<number>('epoch_ms', {
    entity: p.datetime(6).nullable(),
    insert: 'greatest(s.ended_at, c.last_at)',
    update: { sql: 'greatest(v.ended_at, excluded.ended_at)' },
  }),
  ip_address: column<string | null>('text', { entity: p.string().length(64).nullable(), update: 'newer' }),
  user_agent: column<string | null>('text', { entity: p.text().nullable(), update: 'newer' }),
  country: column<string | null>('text', { entity: p.string().length(2).nullable(), update: 'newer' }),
  city: column<string | null>('text', { entity: p.string().nullable(), update: 'newer' }),
  isp: column<string | null>('text', { entity: p.string().nullable(), update: 'newer' }),
  organization: column<string | null>('text', { entity: p.string().nullable(), update: 'newer' }),
  asn: column<number | null>('int', { entity: p.integer().nullable(), update: 'newer' }),
  is_vpn: column<boolean>('boolean', { entity: p.boolean().default(false), update: 'latest' }),
  is_proxy: column<boolean>('boolean', { entity: p.boolean().default(false), update: 'latest' }),
  is_tor: column<boolean>('boolean', { entity: p.boolean().default(false), update: 'latest' }),
  is_hosting: column<boolean>('boolean', { entity: p.boolean().default(false), update: 'latest' }),
  platform: column<string | null>('text', { entity: p.string().length(32).nullable(), update: 'newer' }),
  browser: column<string | null>('text', { entity: p.string().length(64).nullable(), update: 'newer' }),
  os: column<string | null>('text', { entity: p.string().length(64).nullable(), update: 'newer' }),
  // The newest verdict wins: later hits carry more signals (interactions) than the first.
  is_bot: column<boolean>('boolean', { entity: p.boolean().default(false), update: 'latest' }),
  /** Short stable codes (plugins/capture/intel/README.md); empty for a person. */
  bot_reasons: column<string[]>('jsonb', { entity: p.json<string[]>().defaultRaw(`'[]'::jsonb`), update: 'latest' }),
  // Written with the landing page only: a direct visit keeps no referrer when a later page (whose referrer is the
  // previous page) arrives in a later request.
  referrer: column<string | null>('text', { entity: p.text().nullable(), update: { sql: 'case when v.landing_url is null then excluded.referrer else v.referrer end' } }),
  landing_url: column<string | null>('text', { entity: p.text().nullable(), update: 'first' }),
  click_ids: column<Record<string, string>>('jsonb', {
    entity: p.json<Record<string, string>>().defaultRaw(`'{}'::jsonb`),
    update: { sql: 'v.click_ids || excluded.click_ids' },
  }),
  consent: column<string>('text', {
    entity: p.string().length(16).default('unknown'),
    update: { sql: `case when excluded.consent = 'unknown' then v.consent else excluded.consent end` },
  }),
  /** The browser's device fingerprint (SHA-256 hex), erasable. */
  device_hash: column<string | null>('text', { entity: p.string().length(64).nullable(), update: 'newer' }),
  /**
   * A hit of the visit carried Global Privacy Control (`Sec-GPC: 1`, or the script saw navigator.globalPrivacyControl):
   * the person opted out of the sale or sharing of their data. Once seen it stays; a journal line written before this
   * column has no value here, read as false.
   */
  gpc: column<boolean>('boolean', {
    entity: p.boolean().default(false),
    insert: 'coalesce(s.gpc, false)',
    update: { sql: 'v.gpc or excluded.gpc' },
  }),
  /**
   * The visitor's consent per purpose (core/consent/purposes.ts) as the page's consent tool or dcgate's banner said
   * it last; null when none said. A journal line written before this column has none.
   */
  consent_purposes: column<ConsentPurposes | null>('jsonb', { entity: p.json<ConsentPurposes>().nullable(), update: 'newer' }),
}

/** The columns of visits the flush computes instead of carrying them in the row (`c`: the events it inserted). */
export const VISIT_COMPUTED_COLUMNS: Readonly<Record<string, Computed>> = {
  id: { entity: p.uuid().primary(), insert: 'gen_random_uuid()' },
  duration_ms: {
    entity: p.bigint('number').default(0),
    insert: '(extract(epoch from greatest(s.ended_at, c.last_at) - least(s.started_at, c.first_at)) * 1000)::bigint',
    update: { sql: '(extract(epoch from greatest(v.ended_at, excluded.ended_at) - least(v.started_at, excluded.started_at)) * 1000)::bigint' },
  },
  page_count: { entity: p.integer().default(0), insert: 'coalesce(c.pages, 0)', update: { sql: 'v.page_count + excluded.page_count' } },
  event_count: { entity: p.integer().default(0), insert: 'coalesce(c.events, 0)', update: { sql: 'v.event_count + excluded.event_count' } },
  updated_at: { entity: p.datetime(6).defaultRaw('now()'), insert: 'now()', update: { sql: 'now()' } },
}

/** The columns of visits the flush never writes: who the visitor identified as (`identifyVisit` in queries.ts). */
export const VISIT_IDENTITY_COLUMNS: Readonly<Record<string, Pick<Column, 'entity'>>> = {
  /** SHA-256 of the normalised email the visitor identified with last. */
  email_hash: { entity: p.string().length(64).nullable() },
  /**
   * SHA-256 of every normalised email the visit was identified with (at most 20), in order: how email matching and
   * erasure find it, so a second identification does not hide the first.
   */
  email_hashes: { entity: p.array().nullable() },
  email: { entity: p.string().nullable() },
  phone: { entity: p.string().length(64).nullable() },
  first_name: { entity: p.string().nullable() },
  last_name: { entity: p.string().nullable() },
  identified_at: { entity: p.datetime(6).nullable() },
}

/** A person a site identified by email, one per site and email (written by /identify, not batched). */
export const IDENTIFIED_USER_COLUMNS = {
  site_id: column<string>('text', { entity: p.string().length(64) }),
  /** In clear: the export of identified users lists it; erasable (DSAR). */
  email: column<string>('text', { entity: p.string() }),
  /** SHA-256 of the normalised email (core/identity), how visits and conversions find this person. */
  email_hash: column<string>('text', { entity: p.string().length(64) }),
  source: column<'client_sdk' | 'form'>('text', { entity: p.string().length(32) }),
  session_id: column<string>('text', { entity: p.string().length(128).nullable(), update: 'latest' }),
  visitor_id: column<string>('text', { entity: p.string().length(64).nullable(), update: 'latest' }),
  device_hash: column<string | null>('text', { entity: p.string().length(64).nullable(), update: 'newer' }),
  ip_country: column<string | null>('text', { entity: p.string().length(2).nullable() }),
  ip_is_vpn: column<boolean>('boolean', { entity: p.boolean().default(false) }),
  // Set by the email-risk plugin through capture:identify; a score already kept stays unless a new one came.
  email_risk_score: column<number | null>('int', { entity: p.integer().nullable(), update: 'newer' }),
  email_risk_label: column<string | null>('text', { entity: p.string().length(32).nullable(), update: 'newer' }),
  is_disposable: column<boolean | null>('boolean', { entity: p.boolean().nullable(), update: 'newer' }),
}

export const IDENTIFIED_USER_COMPUTED_COLUMNS: Readonly<Record<string, Computed>> = {
  id: { entity: p.uuid().primary(), insert: 'gen_random_uuid()' },
  identified_at: { entity: p.datetime(6).defaultRaw('now()'), insert: 'now()' },
  last_seen_at: { entity: p.datetime(6).defaultRaw('now()'), insert: 'now()', update: { sql: 'now()' } },
}

/** A visit's key. */
export const SESSION_COLUMNS = { site_id: column<string>('text'), session_id: column<string>('text') }

