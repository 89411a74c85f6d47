import type { ConsentPurposes } from '../consent/purposes.ts'
import type { NewestVisit, VisitRow } from './queries/intake.ts'
import type { ClickIds } from './types.ts'

export const CLICK_ID_NAMES = ['gclid', 'gbraid', 'wbraid', 'fbc', 'fbp', 'ttclid', 'li_fat_id', 'msclkid', 'uetvid', 'ga', 'ga_session', 'rdt_cid', 'epik', 'twclid', 'ScCid', 'scid', 'fb_lead_id', 'tt_lead_id'] as const satisfies readonly (keyof ClickIds)[]

export interface VisitMatch {
  /** Visits found for the session id or the email. */
  matched: number
  /** Click ids from those visits, the most recent visit's value winning. */
  clickIds: ClickIds
  consent: 'granted' | 'denied' | 'unknown'
  /** The newest matched visit's consent per purpose, when its page had a consent tool (or dcgate's banner) that said. */
  purposes?: ConsentPurposes
  isBot: boolean
  /** The newest visit's landing URL and user agent: the web context of a conversion that brings none. */
  landingUrl?: string
  userAgent?: string
  /** A visit's browser sent Global Privacy Control: the person opted out of the sale or sharing of their data. */
  gpc: boolean
  /** The newest visit's country (from its IP address), two letters, upper case. */
  country?: string
}

/**
 * What the person's earlier visits (newest first) tell: their click ids, consent, whether they were all bots, whether
 * they opted out with Global Privacy Control, and the newest one's web context and country.
 */
export function toVisitMatch(rows: readonly VisitRow[], newest: NewestVisit | null = null): VisitMatch {
  if (rows.length === 0) return { matched: 0, clickIds: {}, consent: 'unknown', isBot: false, gpc: false }
  const clickIds: ClickIds = {}
  for (const row of [...rows].reverse()) {
    for (const name of CLICK_ID_NAMES) if (row.click_ids[name]) clickIds[name] = row.click_ids[name]
  }
  const latestConsent = rows.find((r) => r.consent !== 'unknown')?.consent
  const purposes = rows.find((r) => r.consent_purposes)?.consent_purposes
  return {
    matched: rows.length,
    clickIds,
    consent: latestConsent === 'granted' || latestConsent === 'denied' ? latestConsent : 'unknown',
    ...(purposes ? { purposes } : {}),
    isBot: rows.every((r) => r.is_bot),
    // An opt-out stays: a later visit without the signal does not take it back.
    gpc: rows.some((r) => r.gpc),
    ...(newest?.landing_url ? { landingUrl: newest.landing_url } : {}),
    ...(newest?.user_agent ? { userAgent: newest.user_agent } : {}),
    ...(newest?.country ? { country: newest.country } : {}),
  }
}

/** Click ids the conversion brought itself. */
export function givenClickIds(ids: Record<string, string | undefined>): ClickIds {
  const clickIds: ClickIds = {}
  for (const name of CLICK_ID_NAMES) if (ids[name]) clickIds[name] = ids[name]
  // A raw fbclid becomes Meta's fbc cookie value, as the pixel would have stored it.
  if (!clickIds.fbc && ids.fbclid) clickIds.fbc = `fb.1.${Date.now()}.${ids.fbclid}`
  return clickIds
}
