import type { RunPrepared } from '../db/prepared.ts'
import { LOOK_UP_INTAKE } from './statements.ts'
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

/** What intake learns in its one read before writing: which trust tiers already hold the messageId, and who is this. */
export interface IntakeLookup {
  /** `trusted` and/or `public`; empty when the messageId is new to the site. */
  holders: string[]
  match: VisitMatch
}

/** One round trip for both reads intake makes before its write (see LOOK_UP_INTAKE). */
export async function lookUpIntake(
  prepared: RunPrepared, siteId: string, messageId: string, by: { sessionId?: string, emailHash?: string },
): Promise<IntakeLookup> {
  const searchVisits = Boolean(by.sessionId || by.emailHash)
  const [row] = await prepared<{ holders: string[] | null, visits: VisitRow[] | null }>(LOOK_UP_INTAKE, [siteId, messageId, searchVisits, by.sessionId ?? null, by.emailHash ?? null])
  return { holders: row?.holders ?? [], match: toMatch(row?.visits ?? []) }
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
