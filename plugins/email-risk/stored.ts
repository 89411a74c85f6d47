import type { RunPrepared } from '../../core/db/prepared.ts'
import * as v from 'valibot'
import { findStoredRow, type StoredRow } from './queries.ts'
import { EmailInfoSchema, type DeviceFingerprint, type EmailInfo, type IpInfo, type UserInfo } from './result.ts'

export interface StoredEmail {
  /** The stored assessment; undefined when the email was identified before this plugin ran (the caller makes one). */
  emailInfo: EmailInfo | undefined
  userInfo: UserInfo
  ipInfo: IpInfo | null
}

/** The stored answer for an identified email, or undefined when the email is not identified on the site. */
export async function findStoredEmail(sql: RunPrepared, siteId: string, emailHash: string): Promise<StoredEmail | undefined> {
  const row = await findStoredRow(sql, siteId, emailHash)
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
