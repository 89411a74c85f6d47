import type { PluginContext } from '../../../core/plugin.ts'
import { oneOff, redact, stripQuery, toPerson, type EraseRequest } from './person.ts'
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
  const run = oneOff(ctx.prepared)
  ctx.hooks.hook('dsar:erase', async (request: EraseRequest) => {
    const person = toPerson(request)
    const values = [person.siteId, person.pattern, person.exactHashes, person.email]
    const theirs = `select session_id from visits where site_id = $1
      and (email_hashes && $3::text[] or email_hash = any($3::text[]) or lower(email) = $4 or concat_ws(' ', landing_url, referrer) ~* $2)`
    const events = await run<{ id: string }>(
      `update page_events set url = ${redact(stripQuery('url'))}, referrer = ${redact(stripQuery('referrer'))}, title = ${redact('title')},
         props = case when props::text ~* $2 then null else props end
       where site_id = $1 and (session_id in (${theirs}) or concat_ws(' ', url, referrer, title, props::text) ~* $2)
       returning id`,
      values,
    )
    const visits = await run<{ id: string }>(
      `update visits set email = null, email_hash = null, email_hashes = null, phone = null, first_name = null, last_name = null, identified_at = null,
         ip_address = null, user_agent = null, device_hash = null, visitor_id = null, click_ids = '{}'::jsonb,
         landing_url = ${redact(stripQuery('landing_url'))}, referrer = ${redact(stripQuery('referrer'))}, updated_at = now()
       where site_id = $1 and session_id in (${theirs})
       returning id`,
      values,
    )
    count(request, 'page_events', events.length)
    count(request, 'visits', visits.length)
  })
}
