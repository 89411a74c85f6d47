/**
 * One HubSpot poll: search the contacts in a qualified stage modified since the window opened, page by page in
 * ascending modification order. HubSpot serves at most 10,000 results per query; before reaching that, the query is
 * re-anchored on the newest modification time seen so far (GTE, so ties are read again, not lost).
 */
import type { CrmPollContext, CrmPollResult } from '../../../core/registry.ts'
import { exchange, unreadableAnswer } from '../shared/http.ts'
import { Harvest, closeWindow, openWindow } from '../shared/window.ts'
import { hubspotBearer } from './auth.ts'
import type { HubspotOptions } from './index.ts'
import { SEARCH_RESULT_CAP, fromSearchPage, toSearchRequest, type SearchPage } from './map.ts'
import { toHubspotError } from './response.ts'

export async function pollHubspot(options: HubspotOptions, cursor: string | undefined, ctx: CrmPollContext): Promise<CrmPollResult> {
  const window = openWindow(cursor, options, ctx.now())
  const harvest = new Harvest()
  let anchor = window.since
  let after: string | undefined
  let read = 0

  for (;;) {
    const page = await searchPage(options, anchor, after, ctx)
    for (const contact of page.contacts) {
      harvest.seen(contact.modifiedAt)
      harvest.add(contact.email)
    }
    read += page.contacts.length
    if (!page.after) break
    if (read + options.pageSize <= SEARCH_RESULT_CAP) {
      after = page.after
      continue
    }
    // The next page would pass the cap: start a new query from the newest contact seen. If even that does not move
    // (10,000 contacts modified in the same millisecond), stop here; the next poll starts from the same place.
    if (!harvest.newest || harvest.newest <= anchor) break
    anchor = harvest.newest
    after = undefined
    read = 0
  }
  return { qualified: harvest.leads(options.eventName), cursor: closeWindow(window, harvest.newest) }
}

async function searchPage(options: HubspotOptions, since: Date, after: string | undefined, ctx: CrmPollContext): Promise<SearchPage> {
  const request = toSearchRequest(options, since, after)
  const answer = await exchange('hubspot', ctx, request.url, {
    method: 'POST',
    headers: { authorization: `Bearer ${await hubspotBearer(options, ctx)}`, 'content-type': 'application/json', accept: 'application/json' },
    body: request.body,
  })
  if (answer.status !== 200) throw toHubspotError(answer)
  const page = fromSearchPage(answer.json, options.modifiedProperty)
  if (!page) throw unreadableAnswer('hubspot', answer, 'a search page ({ results, paging })')
  return page
}
