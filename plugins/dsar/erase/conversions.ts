import type { PluginContext } from '../../../core/plugin.ts'
import { oneOff, redact, stripQuery, toPerson, type EraseRequest } from './person.ts'
import { count } from './tally.ts'

/**
 * The person's conversions on the site keep what the site owner needs for revenue and the delivery report (event,
 * value, currency, items, order id, time, state, deliveries) and lose everything that identifies the buyer: the
 * hashed identity used to match (every email and phone variant, names, address, external id), IP, user agent,
 * user and anonymous ids, click ids, the page URL's query. Held conversions are the release plugin's: it deletes
 * them in its own listener (which runs first, being set up earlier).
 *
 * A conversion is the person's when its identity carries this address's hash (or, for Gmail, the same mailbox's
 * Google variant), when it came from one of the person's identified visits, or when its user id, anonymous id or
 * page URL holds the email.
 */
export function addConversionEraser(ctx: PluginContext): void {
  const run = oneOff(ctx.prepared)
  ctx.hooks.hook('dsar:erase', async (request: EraseRequest) => {
    const person = toPerson(request)
    const rows = await run<{ id: string }>(
      `with theirs as (
         select c.id from conversions c
         where c.site_id = $1 and (
           c.identity ->> 'email' = any($3::text[]) or c.identity ->> 'emailGoogle' = $4 or c.held_email = $5
           or c.session_id in (select v.session_id from visits v where v.site_id = $1 and (v.email_hashes && $3::text[] or v.email_hash = any($3::text[]) or lower(v.email) = $5))
           or concat_ws(' ', c.user_id, c.anonymous_id, c.page_url) ~* $2
         )
       )
       update conversions c set identity = '{}'::jsonb, ip = null, user_agent = null, user_id = null, anonymous_id = null,
         click_ids = '{}'::jsonb, held_email = null, page_url = ${redact(stripQuery('c.page_url'))}
       from theirs where c.id = theirs.id
       returning c.id`,
      [person.siteId, person.pattern, person.exactHashes, person.googleHash, person.email],
    )
    count(request, 'conversions', rows.length)
  })
}
