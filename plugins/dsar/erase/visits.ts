import type { PluginContext } from '../../../core/plugin.ts'
import { anonymisePageEvents, anonymiseVisits } from '../queries/erase.ts'
import { oneOff } from '../queries/one-off.ts'
import { toPerson, type EraseRequest } from './person.ts'
import { count } from './tally.ts'

/**
 * The person's visits on the site are anonymised, not deleted: what describes the visit stays (time, duration,
 * page and event counts, country, city, network, browser, bot verdict, consent), what identifies the person goes
 * (email, its hash, phone, names, identification time, IP, user agent, device fingerprint, visitor id, click ids,
 * the query of the landing page and referrer, and every identity it was given). A visit is the person's when it
 * was identified by this email (first, last or in between), or when its landing page or referrer holds the email.
 *
 * Their page views and events stay as anonymous page data, with queries removed from their URLs. Anywhere else on
 * the site, an event whose URL, title or properties hold the email or one of its hashes has that text erased.
 */
export function addVisitEraser(ctx: PluginContext): void {
  const sql = oneOff(ctx.prepared)
  ctx.hooks.hook('dsar:erase', async (request: EraseRequest) => {
    const person = toPerson(request)
    // Events first: they find the person's sessions through the visits, which lose the email next.
    count(request, 'page_events', await anonymisePageEvents(sql, person))
    count(request, 'visits', await anonymiseVisits(sql, person))
  })
}
