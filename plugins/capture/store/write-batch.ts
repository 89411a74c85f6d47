import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import { EVENT_COLUMNS, rowsOf, SESSION_COLUMNS, VISIT_COLUMNS } from './columns.ts'
import { EMPTY_JSONB_ARRAY, type PendingRows } from './pending.ts'

/**
 * One statement writes a whole flush: the page events (each once: `id` is made when the hit arrives, so a
 * journal replayed after a crash inserts nothing twice), then every visit, counting only the events this
 * statement inserted. Atomic, so a replay after a commit adds nothing.
 */
const WRITE_BATCH: PreparedStatement = {
  name: 'dcgate_capture_write_batch_v4',
  // Planned per call: its row counts change with every flush.
  reusePlan: false,
  text: `
with hits as (${rowsOf(EVENT_COLUMNS, '$1')}), inserted as (
  insert into page_events (id, site_id, session_id, kind, name, url, referrer, title, props, occurred_at, received_at)
  select id, site_id, session_id, kind, name, url, referrer, title, props, occurred_at, received_at from hits
  -- The same hit again: a replayed journal changes nothing; a page view first counted without identifiers and
  -- sent again once consent was given is linked to its visit (and counted there) instead of stored twice.
  on conflict (id) do update set session_id = excluded.session_id, url = excluded.url, referrer = excluded.referrer
    where page_events.session_id is null and excluded.session_id is not null
  returning site_id, session_id, kind, occurred_at
), counts as (
  select site_id, session_id, count(*) filter (where kind = 'pageview') as pages, count(*) filter (where kind = 'event') as events,
    min(occurred_at) as first_at, max(occurred_at) as last_at
  from inserted where session_id is not null group by site_id, session_id
), seen as (${rowsOf(VISIT_COLUMNS, '$2')})
insert into visits as v (id, site_id, session_id, visitor_id, started_at, ended_at, duration_ms, page_count, event_count,
  ip_address, user_agent, country, city, isp, organization, asn, is_vpn, is_proxy, is_tor, is_hosting, platform, browser, os,
  is_bot, bot_reasons, referrer, landing_url, click_ids, consent, device_hash, updated_at)
select gen_random_uuid(), s.site_id, s.session_id, s.visitor_id, least(s.started_at, c.first_at), greatest(s.ended_at, c.last_at),
  (extract(epoch from greatest(s.ended_at, c.last_at) - least(s.started_at, c.first_at)) * 1000)::bigint,
  coalesce(c.pages, 0), coalesce(c.events, 0), s.ip_address, s.user_agent, s.country, s.city, s.isp, s.organization, s.asn,
  s.is_vpn, s.is_proxy, s.is_tor, s.is_hosting, s.platform, s.browser, s.os, s.is_bot, s.bot_reasons, s.referrer,
  s.landing_url, s.click_ids, s.consent, s.device_hash, now()
from seen s left join counts c on c.site_id = s.site_id and c.session_id = s.session_id
on conflict (site_id, session_id) do update set
  visitor_id = coalesce(excluded.visitor_id, v.visitor_id),
  started_at = least(v.started_at, excluded.started_at),
  ended_at = greatest(v.ended_at, excluded.ended_at),
  duration_ms = (extract(epoch from greatest(v.ended_at, excluded.ended_at) - least(v.started_at, excluded.started_at)) * 1000)::bigint,
  page_count = v.page_count + excluded.page_count,
  event_count = v.event_count + excluded.event_count,
  ip_address = coalesce(excluded.ip_address, v.ip_address),
  user_agent = coalesce(excluded.user_agent, v.user_agent),
  country = coalesce(excluded.country, v.country),
  city = coalesce(excluded.city, v.city),
  isp = coalesce(excluded.isp, v.isp),
  organization = coalesce(excluded.organization, v.organization),
  asn = coalesce(excluded.asn, v.asn),
  is_vpn = excluded.is_vpn, is_proxy = excluded.is_proxy, is_tor = excluded.is_tor, is_hosting = excluded.is_hosting,
  platform = coalesce(excluded.platform, v.platform),
  browser = coalesce(excluded.browser, v.browser),
  os = coalesce(excluded.os, v.os),
  -- The newest verdict wins: later hits carry more signals (interactions) than the first.
  is_bot = excluded.is_bot, bot_reasons = excluded.bot_reasons,
  referrer = coalesce(v.referrer, excluded.referrer),
  landing_url = coalesce(v.landing_url, excluded.landing_url),
  click_ids = v.click_ids || excluded.click_ids,
  consent = case when excluded.consent = 'unknown' then v.consent else excluded.consent end,
  device_hash = coalesce(excluded.device_hash, v.device_hash),
  updated_at = now()`,
}

/** Withdrawals of a flush, after its upsert: the refusal stays, the identifiers go (the delivery gate then stops the visit's conversions). */
const WITHDRAW: PreparedStatement = {
  name: 'dcgate_capture_withdraw_v2',
  reusePlan: false,
  text: `update visits v set consent = 'denied', click_ids = '{}'::jsonb, ip_address = null, user_agent = null, device_hash = null, updated_at = now()
    from (${rowsOf(SESSION_COLUMNS, '$1')}) as w
    where v.site_id = w.site_id and v.session_id = w.session_id`,
}

/**
 * Bound parameters, not SQL text: the JSON of a flush is large, and escaping it into the SQL cost more than sending
 * it. The rows go as jsonb in binary form, straight from the bytes they were collected in (pending.ts).
 */
export async function writeBatch(prepared: RunPrepared, rows: PendingRows): Promise<void> {
  const { events, visits, withdrawn } = rows.params()
  if (events !== EMPTY_JSONB_ARRAY || visits !== EMPTY_JSONB_ARRAY) await prepared(WRITE_BATCH, [events, visits])
  if (withdrawn) await prepared(WITHDRAW, [withdrawn])
}
