/**
 * A destination's delivery health, read from the outbox (`deliveries`): the share of ended deliveries that failed in
 * a window, its last refusal, and since when it is failing or healthy. Read by the alert job (./alerts.ts) and the
 * dashboard's health view. Refunds (adjustment rows) count too: a refused refund is a refused delivery.
 */
import type { PreparedStatement, RunPrepared } from '../db/prepared.ts'

/**
 * Failures that need new credentials rather than a retry: no adapter marks them apart, so they are read from what
 * adapters say. HTTP 401; an authorize step the adapter gave up on (core/delivery/dispatch.ts `authorization failed:`);
 * or the adapters' own hints, which name the token or credentials and say invalid, expired, revoked or wrong (Meta's
 * OAuthException 190 answers 401 and its hint says "The access token is invalid, expired or revoked"; TikTok's 40105
 * comes with HTTP 200 and the same words). A PostgreSQL regular expression, case-insensitive.
 */
export const CREDENTIAL_WORDS = String.raw`(access token|refresh token|credentials?|api key|api secret)[^.]*\m(invalid|expired|revoked|wrong)\M`
const CREDENTIAL_REFUSAL = `(d.http_status = 401 or d.error like 'authorization failed:%' or d.error ~* '${CREDENTIAL_WORDS}')`

export interface DestinationHealth {
  provider: string
  /** Ended deliveries in the window: sent, failed, and retrying ones whose last attempt failed. */
  sent: number
  failed: number
  /** Of `failed`, those the platform refused for their credentials. */
  credential_failures: number
  last_refusal_at: string | null
  last_refusal_status: number | null
  last_refusal: string | null
  /** Whether the newest ended delivery is a credentials refusal: the credentials cause holds. */
  credentials_refused: boolean
  /** `failing` (the newest ended delivery failed), `healthy` (it was sent) or `unknown` (nothing ended yet). */
  state: 'failing' | 'healthy' | 'unknown'
  /** When the current state began: the first failure after the last success, or the first success after the last failure. */
  since: string | null
}

/**
 * How far back the lookups read, by creation time: the index on (site_id, created_at) bounds them, so a site with
 * years of deliveries costs the alert job no more than one with a month. "Since" is at most this old.
 */
export const HEALTH_HORIZON_DAYS = 30
const RECENT = `d.created_at >= now() - make_interval(days => ${HEALTH_HORIZON_DAYS})`

const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/** $1 site, $2 platforms, $3 window in minutes. One row per platform, in the order given. */
const DESTINATION_HEALTH: PreparedStatement = {
  name: 'dcgate_destination_health_v2',
  reusePlan: false,
  text: `select p.provider, w.sent, w.failed, w.credential_failures,
      ${iso('r.updated_at')} as last_refusal_at, r.http_status as last_refusal_status, r.error as last_refusal,
      coalesce(n.status = 'failed' and n.credentials, false) as credentials_refused,
      case when n.status is null then 'unknown' when n.status = 'sent' then 'healthy' else 'failing' end as state,
      ${iso(`case when n.status = 'sent'
        then (select min(d.updated_at) from deliveries d where d.site_id = $1 and ${RECENT} and d.provider = p.provider and d.status = 'sent' and d.updated_at > coalesce(r.updated_at, '-infinity'))
        else (select min(d.updated_at) from deliveries d where d.site_id = $1 and ${RECENT} and d.provider = p.provider and d.status = 'failed' and d.updated_at > coalesce(s.updated_at, '-infinity')) end`)} as since
    from unnest($2::text[]) with ordinality as p(provider, position)
    cross join lateral (
      select (count(*) filter (where d.status = 'sent'))::int as sent,
        (count(*) filter (where d.status in ('failed', 'retrying')))::int as failed,
        (count(*) filter (where d.status in ('failed', 'retrying') and ${CREDENTIAL_REFUSAL}))::int as credential_failures
      from deliveries d where d.site_id = $1 and ${RECENT} and d.provider = p.provider and d.updated_at >= now() - make_interval(mins => $3::int)
        and (d.status in ('sent', 'failed') or (d.status = 'retrying' and d.attempts > 0))
    ) w
    left join lateral (
      select d.updated_at, d.http_status, d.error from deliveries d where d.site_id = $1 and ${RECENT} and d.provider = p.provider and d.status = 'failed'
      order by d.updated_at desc limit 1
    ) r on true
    left join lateral (
      select d.updated_at from deliveries d where d.site_id = $1 and ${RECENT} and d.provider = p.provider and d.status = 'sent' order by d.updated_at desc limit 1
    ) s on true
    left join lateral (
      select d.status, ${CREDENTIAL_REFUSAL} as credentials from deliveries d
      where d.site_id = $1 and ${RECENT} and d.provider = p.provider and d.status in ('sent', 'failed') order by d.updated_at desc limit 1
    ) n on true
    order by p.position`,
}

export function destinationHealth(prepared: RunPrepared, siteId: string, platforms: readonly string[], windowMinutes: number): Promise<DestinationHealth[]> {
  return prepared<DestinationHealth>(DESTINATION_HEALTH, [siteId, platforms, windowMinutes])
}

/** The share of the window's ended deliveries that failed for a reason other than credentials (those have a cause of their own). */
export function failureShare(health: Pick<DestinationHealth, 'sent' | 'failed' | 'credential_failures'>): number {
  const failed = health.failed - health.credential_failures
  const ended = health.sent + failed
  return ended === 0 ? 0 : failed / ended
}
