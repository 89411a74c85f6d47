import type { MikroORM } from '@mikro-orm/postgresql'
import type { ClickIds } from './types.ts'

export const CLICK_ID_NAMES = ['gclid', 'gbraid', 'wbraid', 'fbc', 'fbp', 'ttclid', 'li_fat_id', 'msclkid', 'rdt_cid', 'epik', 'twclid', 'ScCid'] as const satisfies readonly (keyof ClickIds)[]

export interface VisitMatch {
  /** Visits found for the session id or the email. */
  matched: number
  /** Click ids from those visits, the most recent visit's value winning. */
  clickIds: ClickIds
  consent: 'granted' | 'denied' | 'unknown'
  isBot: boolean
}

/** What intake learns in its one read before writing: is the messageId already stored, and who is this. */
export interface IntakeLookup {
  duplicate: boolean
  match: VisitMatch
}

/**
 * One round trip for both reads intake makes before its write: whether the site already stored this messageId
 * (a repeat is answered before any hook runs), and the earlier visits of this person, by dc_session_id or by the
 * hash of the normalised email, with the click ids they carried. Newest visits first; at most 50 are read.
 */
export async function lookUpIntake(
  orm: MikroORM, siteId: string, messageId: string, by: { sessionId?: string, emailHash?: string },
): Promise<IntakeLookup> {
  const searchVisits = Boolean(by.sessionId || by.emailHash)
  const [row] = await orm.em.getConnection().execute<{ duplicate: boolean, visits: VisitRow[] | null }[]>(
    `select exists (select 1 from conversions where site_id = ? and message_id = ?) as duplicate,
       case when ? then (select json_agg(v) from (
         select click_ids, consent, is_bot from visits where site_id = ? and (session_id = ? or email_hash = ?)
         order by started_at desc, id desc limit 50) v) end as visits`,
    [siteId, messageId, searchVisits, siteId, by.sessionId ?? null, by.emailHash ?? null],
  )
  return { duplicate: row?.duplicate === true, match: toMatch(row?.visits ?? []) }
}

interface VisitRow { click_ids: Record<string, string>, consent: string, is_bot: boolean }

function toMatch(rows: readonly VisitRow[]): VisitMatch {
  if (rows.length === 0) return { matched: 0, clickIds: {}, consent: 'unknown', isBot: false }
  const clickIds: ClickIds = {}
  for (const row of [...rows].reverse()) {
    for (const name of CLICK_ID_NAMES) if (row.click_ids[name]) clickIds[name] = row.click_ids[name]
  }
  const latestConsent = rows.find((r) => r.consent !== 'unknown')?.consent
  return {
    matched: rows.length,
    clickIds,
    consent: latestConsent === 'granted' || latestConsent === 'denied' ? latestConsent : 'unknown',
    isBot: rows.every((r) => r.is_bot),
  }
}
