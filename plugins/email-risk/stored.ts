import type { PluginContext } from '../../core/plugin.ts'
import * as v from 'valibot'
import { EmailInfoSchema, type DeviceFingerprint, type EmailInfo, type IpInfo, type UserInfo } from './result.ts'

/** At most this many related emails are listed (the count covers them all). */
export const RELATED_LIMIT = 20

/**
 * Everything stored about one email on one site, in one statement: the identified user, its stored assessment,
 * the other emails identified on the same device, and the network of its latest identified visit.
 */
const STORED = {
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

interface StoredRow {
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

export interface StoredEmail {
  /** The stored assessment; undefined when the email was identified before this plugin ran (the caller makes one). */
  emailInfo: EmailInfo | undefined
  userInfo: UserInfo
  ipInfo: IpInfo | null
}

/** The stored answer for an identified email, or undefined when the email is not identified on the site. */
export async function findStoredEmail(ctx: PluginContext, siteId: string, emailHash: string): Promise<StoredEmail | undefined> {
  const [row] = await ctx.prepared<StoredRow>(STORED, [siteId, emailHash])
  if (!row) return undefined
  // Through the schema: the fields in their documented order (jsonb sorts keys), and an assessment stored by an
  // older version that no longer fits is made again (as for an email identified before this plugin ran).
  const info = v.safeParse(EmailInfoSchema, parseJson<EmailInfo>(row.email_info))
  return {
    emailInfo: info.success ? { ...info.output, answered_from: 'stored' } : undefined,
    userInfo: {
      related_emails: row.related_emails,
      related_email_count: row.related_total,
      deviceFingerprint: toDevice(row.device_hash, parseJson<DeviceFingerprint>(row.device)),
      source: row.source,
      first_seen_at: iso(row.identified_at)!,
    },
    ipInfo: toIpInfo(row),
  }
}

function toDevice(hash: string | null, stored: DeviceFingerprint | undefined): DeviceFingerprint | null {
  if (!hash) return null
  if (stored?.hash === hash) return stored
  return { hash, short: hash.slice(0, 12), confidence: null, version: null }
}

/** The identified visit's network; without a visit, what the identification kept (country, VPN); else null. */
function toIpInfo(row: StoredRow): IpInfo | null {
  const hasVisit = row.seen_at !== null
  if (!hasVisit && !row.ip_country) return null
  return {
    ip: row.ip_address,
    country: row.country ?? row.ip_country,
    city: row.city,
    isp: row.isp,
    organization: row.organization,
    asn: row.asn,
    is_vpn: Boolean(row.is_vpn ?? row.ip_is_vpn),
    is_proxy: Boolean(row.is_proxy),
    is_tor: Boolean(row.is_tor),
    is_hosting: Boolean(row.is_hosting),
    seen_at: iso(row.seen_at),
  }
}

function parseJson<T>(value: T | string | null): T | undefined {
  if (value === null) return undefined
  return typeof value === 'string' ? JSON.parse(value) as T : value
}

function iso(value: Date | string | null): string | null {
  return value === null ? null : new Date(value).toISOString()
}
