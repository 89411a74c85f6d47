import * as v from 'valibot'
import { defineCrmPoller } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { EventName, InitialLookbackDays, NonEmpty, OverlapMinutes, httpUrl, pageSize } from '../shared/options.ts'
import { pollSalesforce } from './poll.ts'
import { SALESFORCE_API_VERSION } from './version.ts'

export interface SalesforceOptions {
  clientId: string
  clientSecret?: string
  refreshToken: string
  eventName: string
  /** Lead Status values (picklist API names) that mean qualified. */
  statuses: string[]
  modifiedField: 'LastModifiedDate' | 'SystemModstamp'
  loginUrl: string
  /** Where queries go instead of the session's instance_url (a proxy, a fake). */
  baseUrl?: string
  overlapMinutes: number
  initialLookbackDays: number
  pageSize: number
}

/** `sites[].crm.salesforce`. */
export const salesforceOptions = strictOptions(
  {
    clientId: NonEmpty,
    clientSecret: v.optional(NonEmpty),
    refreshToken: NonEmpty,
    eventName: EventName,
    statuses: v.optional(v.pipe(v.array(v.pipe(NonEmpty, v.maxLength(255, 'must be at most 255 characters')), 'must be a list of Lead Status values'), v.minLength(1, 'must list at least one status'), v.maxLength(20, 'must list at most 20 statuses')), ['Qualified']),
    modifiedField: v.optional(v.picklist(['LastModifiedDate', 'SystemModstamp'], 'must be LastModifiedDate or SystemModstamp'), 'LastModifiedDate'),
    loginUrl: v.optional(httpUrl('https://login.salesforce.com'), 'https://login.salesforce.com'),
    baseUrl: v.optional(httpUrl('https://acme.my.salesforce.com')),
    overlapMinutes: OverlapMinutes,
    initialLookbackDays: InitialLookbackDays,
    // Sforce-Query-Options batchSize: Salesforce takes 200 to 2,000.
    pageSize: pageSize(200, 2000, 2000),
  },
  'clientId, refreshToken and eventName',
) satisfies v.GenericSchema<unknown, SalesforceOptions>

/** Salesforce REST + SOQL over Lead, polled for leads in a qualified status. Setup and decisions: README.md. */
export default defineCrmPoller<SalesforceOptions>({
  name: 'salesforce',
  apiVersion: SALESFORCE_API_VERSION,
  options: salesforceOptions,
  intervalSeconds: 300,
  poll: pollSalesforce,
})
