/**
 * One Salesforce poll: a SOQL query over Lead (qualified status, an email, modified since the window opened, oldest
 * first), then `nextRecordsUrl` until `done`. Queries go to the session's instance_url, or to baseUrl when set (a
 * proxy, a fake). A 401 INVALID_SESSION_ID renews the session once and repeats the request.
 */
import type { CrmPollContext, CrmPollResult } from '../../../core/registry.ts'
import { exchange, unreadableAnswer, type CrmAnswer } from '../shared/http.ts'
import { Harvest, closeWindow, openWindow, parseInstant } from '../shared/window.ts'
import { resolveSession, type SalesforceSession } from './auth.ts'
import type { SalesforceOptions } from './index.ts'
import { leadQuery, queryUrl, readQueryPage } from './map.ts'
import { readSalesforceError, toSalesforceError } from './response.ts'

export async function pollSalesforce(options: SalesforceOptions, cursor: string | undefined, ctx: CrmPollContext): Promise<CrmPollResult> {
  const window = openWindow(cursor, options, ctx.now())
  const harvest = new Harvest()
  const soql = leadQuery(options, window.since)
  let session = await resolveSession(options, ctx)
  let path: string | undefined
  const urlFor = (current: SalesforceSession) => {
    const base = options.baseUrl ?? current.instanceUrl
    return path ? `${base}${path}` : queryUrl(base, soql)
  }

  do {
    let answer = await query(urlFor(session), session, options, ctx)
    if (answer.status === 401 && readSalesforceError(answer.json)?.errorCode === 'INVALID_SESSION_ID') {
      session = await resolveSession(options, ctx, true)
      answer = await query(urlFor(session), session, options, ctx)
    }
    if (answer.status !== 200) throw toSalesforceError(answer)
    const page = readQueryPage(answer.json)
    if (!page) throw unreadableAnswer('salesforce', answer, 'a query result ({ records, done })')
    for (const record of page.records) {
      harvest.seen(parseInstant(record[options.modifiedField]))
      harvest.add(record.Email)
    }
    path = page.nextRecordsUrl
  } while (path)

  return { qualified: harvest.leads(options.eventName), cursor: closeWindow(window, harvest.newest) }
}

function query(url: string, session: SalesforceSession, options: SalesforceOptions, ctx: CrmPollContext): Promise<CrmAnswer> {
  return exchange('salesforce', ctx, url, {
    method: 'GET',
    headers: { authorization: `Bearer ${session.accessToken}`, accept: 'application/json', 'sforce-query-options': `batchSize=${options.pageSize}` },
  })
}
