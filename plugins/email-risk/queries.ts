import type { PreparedStatement, RunPrepared } from '../../core/db/prepared.ts'
import type { DeviceFingerprint, EmailInfo } from './result.ts'

/** At most this many related emails are listed (the count covers them all). */
export const RELATED_LIMIT = 20

/** Keeps an assessment (a newer one replaces an older one). */
const SAVE_RESULT: PreparedStatement = {
  name: 'email_risk_save_result_v1',
  text: `insert into email_risk_results as r (id, site_id, email_hash, email_info, device, checked_at)
    values (gen_random_uuid(), $1, $2, $3::jsonb, $4::jsonb, now())
    on conflict (site_id, email_hash) do update set email_info = excluded.email_info, device = coalesce(excluded.device, r.device), checked_at = now()`,
}

/**
 * A live check becomes a server-side identification (listed among identified users as server_sdk) with its
 * assessment. Committed without waiting for the WAL flush: lost in a database crash, the next check is live again.
 */
const SAVE_LIVE_CHECK: PreparedStatement = {
  name: 'email_risk_save_live_check_v1',
  text: `with async_commit as materialized (select set_config('synchronous_commit', 'off', true)),
    result as (${SAVE_RESULT.text})
    insert into identified_users (id, site_id, email, email_hash, source, ip_is_vpn, email_risk_score, email_risk_label, is_disposable, identified_at, last_seen_at)
    select gen_random_uuid(), $1, $5, $2, 'server_sdk', false, $6, $7, $8, now(), now() from async_commit
    on conflict (site_id, email_hash) do nothing`,
}

/**
 * A stored assessment completed by a private check (it was scored offline): kept, and the identified user's risk
 * columns follow it, so the list of identified users shows the complete verdict.
 */
const SAVE_COMPLETED: PreparedStatement = {
  name: 'email_risk_save_completed_v1',
  text: `with result as (${SAVE_RESULT.text})
    update identified_users set email_risk_score = $5, email_risk_label = $6, is_disposable = $7
    where site_id = $1 and email_hash = $2`,
}

const FORGET_RESULT: PreparedStatement = { name: 'email_risk_forget_result_v1', text: 'delete from email_risk_results where site_id = $1 and email_hash = $2' }

/**
 * Everything stored about one email on one site, in one statement: the identified user, its stored assessment,
 * the other emails identified on the same device, and the network of its latest identified visit.
 */
const STORED: PreparedStatement = {
  name: 'email_risk_stored',
  text: `select u.source, u.identified_at, u.device_hash, u.ip_country, u.ip_is_vpn, r.email_info, r.device,
    rel.emails as related_emails, rel.total as related_total,
    v.ip_address, v.country, v.city, v.isp, v.organization, v.asn, v.is_vpn, v.is_proxy, v.is_tor, v.is_hosting, v.seen_at
  from identified_users u
  left join email_risk_results r on r.site_id = u.site_id and r.email_hash = u.email_hash
  left join lateral (
    select coalesce((array_agg(o.email order by o.last_seen_at desc))[1:${RELATED_LIMIT}], '{}') as emails, count(*)::int as total
    from identified_users o
    where u.device_hash is not null and o.site_id = u.site_id and o.device_hash = u.device_hash and o.email_hash <> u.email_hash
  ) rel on true
  left join lateral (
    select ip_address, country, city, isp, organization, asn, is_vpn, is_proxy, is_tor, is_hosting, coalesce(identified_at, started_at) as seen_at
    from visits where site_id = u.site_id and email_hash = u.email_hash
    order by identified_at desc nulls last, started_at desc limit 1
  ) v on true
  where u.site_id = $1 and u.email_hash = $2`,
}

/** The site's lifetime row exists (made once per site and process; a no-op when it does). */
const ENSURE_QUOTA_ROW: PreparedStatement = { name: 'email_risk_quota_row_v1', text: `insert into email_check_quotas (site_id) values ($1) on conflict do nothing` }

/**
 * Counts checks for every site of a batch: $1 site ids, $2 checks, $3 grant all (paid plan, or already granted).
 * The lifetime rows are locked first (FOR UPDATE reads the latest count, whichever instance wrote it), so a free
 * site is granted exactly what is left of its free checks ($4); a paid one all, the checks past them billable. The
 * month's row gets the same counts. Committed without waiting for the WAL flush (this transaction only): a database
 * crash may forget the last few counts, never add any.
 */
const COUNT_CHECKS: PreparedStatement = {
  name: 'email_risk_count_batch_v1',
  text: `with async_commit as materialized (select set_config('synchronous_commit', 'off', true)),
  asked as (select * from unnest($1::text[], $2::int[], $3::boolean[]) as a(site_id, n, grant_all)),
  locked as (select q.site_id, q.checks from email_check_quotas q, async_commit where q.site_id = any($1::text[]) order by q.site_id for update of q),
  granted as (
    select a.site_id, case when a.grant_all then a.n else least(a.n, greatest(0, $4::int - l.checks)) end as allowed, l.checks as before
    from asked a join locked l on l.site_id = a.site_id
  ),
  billed as (select site_id, allowed, before, greatest(0, before + allowed - $4::int) - greatest(0, before - $4::int) as billable from granted),
  totals as (
    update email_check_quotas q set checks = q.checks + b.allowed, billable = q.billable + b.billable, last_check_at = now()
    from billed b where q.site_id = b.site_id and b.allowed > 0
  ),
  months as (
    insert into email_check_months as m (site_id, month, checks, billable)
    select site_id, to_char(now() at time zone 'utc', 'YYYY-MM'), allowed, billable from billed where allowed > 0
    on conflict (site_id, month) do update set checks = m.checks + excluded.checks, billable = m.billable + excluded.billable
  )
  select site_id, allowed, before + allowed as total from billed`,
}

const USAGE_TOTAL: PreparedStatement = { name: 'email_risk_usage_total_v1', text: 'select checks, billable, first_check_at, last_check_at from email_check_quotas where site_id = $1' }
const USAGE_MONTHS: PreparedStatement = {
  name: 'email_risk_usage_months_v1',
  text: 'select month, checks, billable from email_check_months where site_id = $1 and checks > 0 order by month desc',
}

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value))

/** The risk columns an identified user gets from an assessment. */
export interface RiskColumns { score: number, label: string, isDisposable: boolean }

export async function upsertResult(sql: RunPrepared, siteId: string, emailHash: string, info: EmailInfo, device: DeviceFingerprint | undefined): Promise<void> {
  await sql(SAVE_RESULT, [siteId, emailHash, json(info), json(device)])
}

export async function saveLiveCheck(sql: RunPrepared, siteId: string, email: string, emailHash: string, info: EmailInfo, risk: RiskColumns): Promise<void> {
  await sql(SAVE_LIVE_CHECK, [siteId, emailHash, json(info), null, email, risk.score, risk.label, risk.isDisposable])
}

export async function saveCompletedResult(sql: RunPrepared, siteId: string, emailHash: string, info: EmailInfo, risk: RiskColumns): Promise<void> {
  await sql(SAVE_COMPLETED, [siteId, emailHash, json(info), null, risk.score, risk.label, risk.isDisposable])
}

export async function deleteResult(sql: RunPrepared, siteId: string, emailHash: string): Promise<void> {
  await sql(FORGET_RESULT, [siteId, emailHash])
}

export interface StoredRow {
  source: string
  identified_at: Date | string
  device_hash: string | null
  ip_country: string | null
  ip_is_vpn: boolean
  email_info: EmailInfo | string | null
  device: DeviceFingerprint | string | null
  related_emails: string[]
  related_total: number
  ip_address: string | null
  country: string | null
  city: string | null
  isp: string | null
  organization: string | null
  asn: number | null
  is_vpn: boolean | null
  is_proxy: boolean | null
  is_tor: boolean | null
  is_hosting: boolean | null
  seen_at: Date | string | null
}

export async function findStoredRow(sql: RunPrepared, siteId: string, emailHash: string): Promise<StoredRow | undefined> {
  return (await sql<StoredRow>(STORED, [siteId, emailHash]))[0]
}

export async function ensureQuotaRow(sql: RunPrepared, siteId: string): Promise<void> {
  await sql(ENSURE_QUOTA_ROW, [siteId])
}

/** Counts a batch of checks per site; returns what each site was granted and its lifetime total after. */
export async function countChecks(
  sql: RunPrepared, batch: ReadonlyMap<string, number>, grantAll: (siteId: string) => boolean, freeChecks: number,
): Promise<{ site_id: string, allowed: number, total: number }[]> {
  const sites = [...batch.keys()]
  return sql(COUNT_CHECKS, [sites, sites.map((s) => batch.get(s)!), sites.map(grantAll), freeChecks])
}

export interface UsageTotalRow { checks: number, billable: number, first_check_at: string | null, last_check_at: string | null }
export interface UsageMonthRow { month: string, checks: number, billable: number }

export async function readUsage(sql: RunPrepared, siteId: string): Promise<{ total: UsageTotalRow | undefined, months: UsageMonthRow[] }> {
  const [total] = await sql<UsageTotalRow>(USAGE_TOTAL, [siteId])
  return { total, months: await sql<UsageMonthRow>(USAGE_MONTHS, [siteId]) }
}
