/** The Overview page's figures: deliveries per day, match quality, what waits, email checks, the last errors. */
import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import { sqlIsoTime } from './paging.ts'

export interface DayCount { day: string, provider: string, outcome: 'sent' | 'failed' | 'skipped' | 'waiting', deliveries: number }

/**
 * $1 site, $2 days. Conversions' deliveries created per UTC day, platform and outcome (pending and retrying count as
 * waiting); refunds told to the platforms (adjustment rows) are not conversions and are left out.
 */
const PER_DAY: PreparedStatement = {
  name: 'dashboard_overview_per_day_v3',
  reusePlan: false,
  text: `select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, provider,
      case when status in ('sent', 'failed', 'skipped') then status else 'waiting' end as outcome, count(*)::int as deliveries
    from all_deliveries
    where site_id = $1 and kind = 'conversion' and created_at >= date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - make_interval(days => $2::int - 1)
    group by 1, 2, 3 order by 1, 2, 3`,
}

export function deliveriesPerDay(prepared: RunPrepared, siteId: string, days: number): Promise<DayCount[]> {
  return prepared<DayCount>(PER_DAY, [siteId, days])
}

export interface MatchQuality { conversions: number, with_click_id: number, with_email: number, with_phone: number }

/** $1 site, $2 days. Conversions received in the window and how many carry each identifier (hashed or not). */
const MATCH_QUALITY: PreparedStatement = {
  name: 'dashboard_overview_match_quality_v1',
  reusePlan: false,
  text: `select count(*)::int as conversions,
      (count(*) filter (where click_ids <> '{}'::jsonb))::int as with_click_id,
      (count(*) filter (where identity ? 'email'))::int as with_email,
      (count(*) filter (where identity ?| array['phoneE164', 'phoneDigits']))::int as with_phone
    from conversions where site_id = $1 and created_at >= now() - make_interval(days => $2::int)`,
}

export async function matchQuality(prepared: RunPrepared, siteId: string, days: number): Promise<MatchQuality> {
  return (await prepared<MatchQuality>(MATCH_QUALITY, [siteId, days]))[0]!
}

export interface SiteCounts { held_waiting: number, identified_users: number, email_checks: number }

/**
 * $1 site, $2 the release plugin's expiry in days. Held leads that can still be released, identified users, and the
 * email checks counted against the site's quota (email-risk writes its counts within 25 ms of a check).
 */
const COUNTS: PreparedStatement = {
  name: 'dashboard_overview_counts_v1',
  reusePlan: false,
  text: `select
      (select count(*) from conversions where site_id = $1 and state = 'held' and created_at > now() - make_interval(days => $2::int))::int as held_waiting,
      (select count(*) from identified_users where site_id = $1)::int as identified_users,
      coalesce((select checks from email_check_quotas where site_id = $1), 0)::int as email_checks`,
}

export async function siteCounts(prepared: RunPrepared, siteId: string, expireAfterDays: number): Promise<SiteCounts> {
  return (await prepared<SiteCounts>(COUNTS, [siteId, expireAfterDays]))[0]!
}

export interface LastError { provider: string, id: string, at: string, http_status: number | null, error: string | null }

/** $1 site, $2 platforms, $3 per platform. The newest failed deliveries of each platform, newest first. */
const LAST_ERRORS: PreparedStatement = {
  name: 'dashboard_overview_last_errors_v1',
  reusePlan: false,
  text: `select p.provider, e.id, e.at, e.http_status, e.error
    from unnest($2::text[]) with ordinality as p(provider, position)
    cross join lateral (
      select d.id, ${sqlIsoTime('d.updated_at')} as at, d.http_status, d.error from deliveries d
      where d.site_id = $1 and d.provider = p.provider and d.status = 'failed' order by d.updated_at desc, d.id desc limit $3
    ) e
    order by p.position, e.at desc`,
}

export function lastErrors(prepared: RunPrepared, siteId: string, platforms: readonly string[], perPlatform: number): Promise<LastError[]> {
  return prepared<LastError>(LAST_ERRORS, [siteId, platforms, perPlatform])
}
