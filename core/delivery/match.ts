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

/**
 * Finds the earlier visits of this person on this site, by dc_session_id or by the hash of the
 * normalised email, and gathers the click ids they carried. Newest visits first; at most 50 are read.
 */
export async function matchVisits(orm: MikroORM, siteId: string, by: { sessionId?: string, emailHash?: string }): Promise<VisitMatch> {
  const none: VisitMatch = { matched: 0, clickIds: {}, consent: 'unknown', isBot: false }
  if (!by.sessionId && !by.emailHash) return none
  const rows = await orm.em.getConnection().execute<{ click_ids: Record<string, string>, consent: string, is_bot: boolean }[]>(
    `select click_ids, consent, is_bot from visits where site_id = ? and (session_id = ? or email_hash = ?)
     order by started_at desc, id desc limit 50`,
    [siteId, by.sessionId ?? null, by.emailHash ?? null],
  )
  if (rows.length === 0) return none
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
