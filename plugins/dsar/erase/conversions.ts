import type { PluginContext } from '../../../core/plugin.ts'
import { anonymiseConversions } from '../queries/erase.ts'
import { oneOff } from '../queries/one-off.ts'
import { toPerson, type EraseRequest } from './person.ts'
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
  const sql = oneOff(ctx.prepared)
  ctx.hooks.hook('dsar:erase', async (request: EraseRequest) => {
    count(request, 'conversions', await anonymiseConversions(sql, toPerson(request)))
  })
}
