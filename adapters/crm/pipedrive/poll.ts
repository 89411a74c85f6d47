/**
 * One Pipedrive poll. "Qualified" is configured one of two ways:
 * - `dealStageIds`: deals in one of these stages updated since the window opened (one listing per stage, oldest
 *   update first), then their persons fetched by id, 100 at a time, for the primary email;
 * - `personField`: persons updated since the window opened whose field (a custom field key, or `label_ids`) holds one
 *   of the values.
 * The cursor follows the newest `update_time` of the deals (or persons) listed.
 */
import type { CrmPollContext, CrmPollResult } from '../../../core/registry.ts'
import { exchange, unreadableAnswer } from '../shared/http.ts'
import { Harvest, closeWindow, openWindow, type PollWindow } from '../shared/window.ts'
import type { PipedriveOptions } from './index.ts'
import { IDS_PER_REQUEST, dealsUrl, personFieldMatches, personsByIdUrl, personsChangedUrl, readDeal, readPage, readPerson, type Page } from './map.ts'
import { toPipedriveError } from './response.ts'

export async function pollPipedrive(options: PipedriveOptions, cursor: string | undefined, ctx: CrmPollContext): Promise<CrmPollResult> {
  const window = openWindow(cursor, options, ctx.now())
  const harvest = new Harvest()
  if (options.personField) await collectPersons(options, options.personField, window, harvest, ctx)
  else await collectDeals(options, options.dealStageIds ?? [], window, harvest, ctx)
  return { qualified: harvest.leads(options.eventName), cursor: closeWindow(window, harvest.newest) }
}

async function collectDeals(options: PipedriveOptions, stageIds: readonly number[], window: PollWindow, harvest: Harvest, ctx: CrmPollContext): Promise<void> {
  const personIds = new Set<number>()
  for (const stageId of stageIds) {
    await eachPage(options, ctx, (next) => dealsUrl(options, stageId, window.since, next), readDeal, (deal) => {
      harvest.seen(deal.updatedAt)
      if (deal.personId !== undefined) personIds.add(deal.personId)
    })
  }
  const ids = [...personIds]
  for (let start = 0; start < ids.length; start += IDS_PER_REQUEST) {
    const chunk = ids.slice(start, start + IDS_PER_REQUEST)
    await eachPage(options, ctx, (next) => personsByIdUrl(options, chunk, next), readPerson, (person) => harvest.add(person.email))
  }
}

async function collectPersons(options: PipedriveOptions, field: { key: string, values: string[] }, window: PollWindow, harvest: Harvest, ctx: CrmPollContext): Promise<void> {
  await eachPage(options, ctx, (next) => personsChangedUrl(options, window.since, next), readPerson, (person) => {
    harvest.seen(person.updatedAt)
    if (personFieldMatches(person, field)) harvest.add(person.email)
  })
}

/** Follows `next_cursor` to the last page, handing each item to `visit`. */
async function eachPage<T>(options: PipedriveOptions, ctx: CrmPollContext, url: (cursor: string | undefined) => string, read: (item: Record<string, any>) => T | undefined, visit: (item: T) => void): Promise<void> {
  let next: string | undefined
  do {
    const page = await listPage(options, ctx, url(next), read)
    page.items.forEach(visit)
    next = page.nextCursor
  } while (next)
}

async function listPage<T>(options: PipedriveOptions, ctx: CrmPollContext, url: string, read: (item: Record<string, any>) => T | undefined): Promise<Page<T>> {
  const answer = await exchange('pipedrive', ctx, url, { method: 'GET', headers: { 'x-api-token': options.apiToken, accept: 'application/json' } })
  if (answer.status !== 200) throw toPipedriveError(answer)
  const page = readPage(answer.json, read)
  if (!page) throw unreadableAnswer('pipedrive', answer, 'a list page ({ success: true, data })')
  return page
}
