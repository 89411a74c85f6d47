/**
 * Pure: one contacts search request and the page it answers. One filter group per qualified value (groups are ORed,
 * filters in a group ANDed, at most 5 groups), each `<property> EQ <value>` AND `<modifiedProperty> GTE <since ms>`,
 * sorted ascending on the modification property so the last page holds the newest contact.
 */
import { isObject } from '../../shared/helpers.ts'
import { parseInstant } from '../shared/window.ts'
import type { HubspotOptions } from './index.ts'
import { HUBSPOT_API_VERSION } from './version.ts'

/** HubSpot answers 400 to a page that reaches past the 10,000th result of one query. */
export const SEARCH_RESULT_CAP = 10_000

export interface SearchRequest {
  url: string
  body: string
}

export interface SearchContact {
  id: string
  email: unknown
  modifiedAt: Date | undefined
}

export interface SearchPage {
  contacts: SearchContact[]
  /** The `after` token of the next page; absent on the last page. */
  after?: string
}

export function toSearchRequest(options: HubspotOptions, since: Date, after: string | undefined): SearchRequest {
  const modifiedSince = { propertyName: options.modifiedProperty, operator: 'GTE', value: String(since.getTime()) }
  const body = {
    filterGroups: options.values.map((value) => ({ filters: [{ propertyName: options.property, operator: 'EQ', value }, modifiedSince] })),
    sorts: [{ propertyName: options.modifiedProperty, direction: 'ASCENDING' }],
    properties: [...new Set(['email', options.property, options.modifiedProperty])],
    limit: options.pageSize,
    ...(after === undefined ? {} : { after }),
  }
  return { url: `${options.baseUrl}/crm/objects/${HUBSPOT_API_VERSION}/contacts/search`, body: JSON.stringify(body) }
}

/** `{ total, results: [{ id, properties: { email, … } }], paging?: { next: { after } } }`; undefined if not that shape. */
export function fromSearchPage(json: unknown, modifiedProperty: string): SearchPage | undefined {
  if (!isObject(json) || !Array.isArray(json.results)) return undefined
  const contacts = json.results.filter(isObject).map((result): SearchContact => {
    const properties = isObject(result.properties) ? result.properties : {}
    return { id: String(result.id), email: properties.email, modifiedAt: parseInstant(properties[modifiedProperty]) }
  })
  const after = isObject(json.paging) && isObject(json.paging.next) ? json.paging.next.after : undefined
  return typeof after === 'string' && after ? { contacts, after } : { contacts }
}
