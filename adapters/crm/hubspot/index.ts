import * as v from 'valibot'
import { defineCrmPoller } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { EventName, InitialLookbackDays, NonEmpty, OverlapMinutes, httpUrl, pageSize } from '../shared/options.ts'
import { pollHubspot } from './poll.ts'
import { HUBSPOT_API_SUNSET, HUBSPOT_API_VERSION } from './version.ts'

export interface HubspotOptions {
  /** A service key, or a legacy private app's access token (pat-…): both are sent as a Bearer token. */
  accessToken?: string
  /** An OAuth app's refresh token (the dashboard's Connect button), with the app's clientId and clientSecret. */
  refreshToken?: string
  clientId?: string
  clientSecret?: string
  /** The token endpoint; default `<baseUrl>/oauth/v1/token`. */
  oauthUrl?: string
  eventName: string
  property: string
  values: string[]
  modifiedProperty: string
  overlapMinutes: number
  initialLookbackDays: number
  pageSize: number
  baseUrl: string
}

const PropertyName = v.pipe(v.string('must be a string'), v.trim(), v.regex(/^[a-z0-9_]+$/, 'must be a property\'s internal name (lower case, digits and _), e.g. lifecyclestage'))

/** `sites[].crm.hubspot`. */
export const hubspotOptions = v.pipe(strictOptions(
  {
    accessToken: v.optional(NonEmpty),
    refreshToken: v.optional(NonEmpty),
    clientId: v.optional(NonEmpty),
    clientSecret: v.optional(NonEmpty),
    oauthUrl: v.optional(httpUrl('https://api.hubapi.com/oauth/v1/token')),
    eventName: EventName,
    property: v.optional(PropertyName, 'lifecyclestage'),
    // One filter group each; HubSpot allows 5 groups a search.
    values: v.optional(v.pipe(v.array(NonEmpty, 'must be a list of property values'), v.minLength(1, 'must list at least one value'), v.maxLength(5, 'must list at most 5 values (HubSpot allows 5 filter groups a search)')), ['salesqualifiedlead']),
    modifiedProperty: v.optional(PropertyName, 'lastmodifieddate'),
    overlapMinutes: OverlapMinutes,
    initialLookbackDays: InitialLookbackDays,
    pageSize: pageSize(1, 100, 100),
    baseUrl: v.optional(httpUrl('https://api.hubapi.com'), 'https://api.hubapi.com'),
  },
  'accessToken (or refreshToken, clientId and clientSecret) and eventName',
), v.rawCheck(({ dataset, addIssue }) => {
  if (!dataset.typed) return
  const { accessToken, refreshToken, clientId, clientSecret } = dataset.value
  if (accessToken && refreshToken) addIssue({ message: 'give accessToken or refreshToken (with clientId and clientSecret), not both' })
  else if (!accessToken && !refreshToken) addIssue({ message: 'needs accessToken (a service key), or refreshToken with clientId and clientSecret' })
  else if (refreshToken && (!clientId || !clientSecret)) addIssue({ message: 'refreshToken needs clientId and clientSecret too' })
})) satisfies v.GenericSchema<unknown, HubspotOptions>

/** HubSpot contacts search (date-based API 2026-09), polled for contacts that reached a qualified stage. Setup and decisions: README.md. */
export default defineCrmPoller<HubspotOptions>({
  name: 'hubspot',
  apiVersion: HUBSPOT_API_VERSION,
  apiSunset: HUBSPOT_API_SUNSET,
  options: hubspotOptions,
  intervalSeconds: 300,
  poll: pollHubspot,
})
