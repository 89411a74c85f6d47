/**
 * A fake HubSpot serving contacts search over a small table of contacts the tests change, on the paths HubSpot serves
 * today (read 2026-11-28): the date-based `POST /crm/objects/{2026-03|2026-09}/contacts/search` and the legacy
 * `POST /crm/v3/objects/contacts/search` (unsupported from September 2027); any other version is a 404, as an
 * unknown path is. It checks what HubSpot checks and answers with HubSpot's bodies:
 * - auth: a Bearer token (a service key or a legacy private app token); none or a wrong one → 401 INVALID_AUTHENTICATION ("Authentication credentials
 *   not found…", as reported in HubSpot/hubspot-api-nodejs#148, #432); a token without crm.objects.contacts.read →
 *   403 MISSING_SCOPES;
 * - the request: at most 5 filter groups, 10 filters a group, 25 in all (changelog 2024-08-26); one sort; limit ≤ 200;
 *   known contact properties only; date filters as epoch milliseconds (an ISO date is refused, hubspot-api-ruby#62);
 *   paging past 10,000 results → 400 (search guide, "Limitations") — all as VALIDATION_ERROR;
 * - throttling: 429 `{ status, message: "You have reached your secondly limit.", errorType: "RATE_LIMIT", policyName:
 *   "SECONDLY" }` (mk-node-hubspot#84, #89), without Retry-After (search answers carry no rate-limit headers);
 * - search is eventually consistent: with `indexLagMs`, a change shows in results only that long after it was made.
 * Where HubSpot's exact wording is not documented (the 10,000 cap message) the fake's is its own, flagged below.
 */
import { randomUUID } from 'node:crypto'
import { bearer, isObject, parseJson, reply } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from './server.ts'

export interface FakeHubspotInit {
  accessToken?: string
  /** A token HubSpot knows but whose private app lacks crm.objects.contacts.read. */
  tokenWithoutScope?: string
  /** Custom contact properties besides HubSpot's defaults. */
  extraProperties?: string[]
  /** The fake's clock for index lag (defaults to the real one). */
  now?: () => number
  /** How long a change takes to reach search results. */
  indexLagMs?: number
  /** An OAuth app installed in the portal: POST /oauth/v1/token trades this refresh token for `accessToken`. */
  oauth?: { clientId: string, clientSecret: string, refreshToken: string }
}

export interface HubspotContactInit {
  email?: string | null
  lifecyclestage?: string
  at: Date
  [property: string]: unknown
}

export interface FakeHubspot extends FakeServer {
  accessToken: string
  /** Every search body received, parsed. */
  searches: Record<string, any>[]
  addContact: (init: HubspotContactInit) => string
  /** Sets properties as a CRM user or workflow would; `lastmodifieddate` becomes `at`. */
  update: (id: string, properties: Record<string, string>, at: Date) => void
  throttleNext: () => void
  delay: (ms: number) => void
}

const DEFAULT_PROPERTIES = ['email', 'firstname', 'lastname', 'lifecyclestage', 'hs_lead_status', 'createdate', 'lastmodifieddate', 'hs_object_id']
const LIFECYCLE_STAGES = ['subscriber', 'lead', 'marketingqualifiedlead', 'salesqualifiedlead', 'opportunity', 'customer', 'evangelist', 'other']
const ALWAYS_RETURNED = ['createdate', 'hs_object_id', 'lastmodifieddate']
const OPERATORS = new Set(['EQ', 'NEQ', 'LT', 'LTE', 'GT', 'GTE', 'HAS_PROPERTY', 'NOT_HAS_PROPERTY', 'IN', 'NOT_IN'])
const RESULT_CAP = 10_000
/** The contacts search on every version HubSpot serves; the request and answer are the same on each. */
const SEARCH_PATH = /^\/crm\/(?:objects\/(?:2026-03|2026-09)|v3\/objects)\/contacts\/search$/

const hubspotError = (status: number, category: string, message: string, extra: Record<string, unknown> = {}): FakeReply =>
  reply(status, { status: 'error', message, correlationId: randomUUID(), category, ...extra })
const invalid = (message: string) => hubspotError(400, 'VALIDATION_ERROR', message)

/** HubSpot's answers, to queue for failure scenarios. */
export const hubspotErrors = {
  unauthenticated: (): FakeReply => ({ ...hubspotError(401, 'INVALID_AUTHENTICATION', 'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview'), headers: { 'x-hubspot-auth-failure': '401 Unauthorized' } }),
  missingScopes: (): FakeReply => hubspotError(403, 'MISSING_SCOPES', 'This app hasn\'t been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.', { errors: [{ message: 'One or more of the following scopes are required.', context: { requiredScopes: ['crm.objects.contacts.read'] } }] }),
  secondlyLimit: (): FakeReply => reply(429, { status: 'error', message: 'You have reached your secondly limit.', errorType: 'RATE_LIMIT', correlationId: randomUUID(), policyName: 'SECONDLY', groupName: 'publicapi:crm-search' }),
}

export async function startFakeHubspot(init: FakeHubspotInit = {}): Promise<FakeHubspot> {
  const accessToken = init.accessToken ?? 'pat-na1-11111111-2222-3333-4444-555555555555'
  const now = init.now ?? Date.now
  const lag = init.indexLagMs ?? 0
  const known = new Set([...DEFAULT_PROPERTIES, ...LIFECYCLE_STAGES.map((stage) => `hs_lifecyclestage_${stage}_date`), ...init.extraProperties ?? []])
  /** Each contact's versions: the search index serves the newest one already visible. */
  const contacts = new Map<string, { id: string, versions: { properties: Record<string, string>, visibleAt: number }[] }>()
  const searches: Record<string, any>[] = []
  let throttled = 0
  let delayMs = 0
  let nextId = 1001

  function write(id: string, changes: Record<string, unknown>, at: Date): void {
    const contact = contacts.get(id)
    if (!contact) throw new Error(`no contact ${id}`)
    const properties = { ...contact.versions.at(-1)?.properties }
    for (const [key, value] of Object.entries(changes)) {
      if (value === null || value === undefined) delete properties[key]
      else properties[key] = String(value)
    }
    if (typeof changes.lifecyclestage === 'string') properties[`hs_lifecyclestage_${changes.lifecyclestage}_date`] = at.toISOString()
    properties.lastmodifieddate = at.toISOString()
    contact.versions.push({ properties, visibleAt: now() + lag })
  }

  function search(request: RecordedRequest): FakeReply {
    const token = bearer(request)
    if (token === init.tokenWithoutScope && token) return hubspotErrors.missingScopes()
    if (token !== accessToken) return hubspotErrors.unauthenticated()
    const body = parseJson(request.body)
    if (!isObject(body)) return invalid('Invalid input JSON on line 1, column 1: Cannot build PublicObjectSearchRequest, some of required attributes are not set')
    searches.push(body)
    if (throttled > 0) {
      throttled--
      return hubspotErrors.secondlyLimit()
    }
    const problem = checkSearch(body)
    if (problem) return invalid(problem)
    const limit = body.limit ?? 10
    const after = Number(body.after ?? 0)
    // The exact message of HubSpot's 10,000-result 400 is not documented; this wording is the fake's own.
    if (after + limit > RESULT_CAP) return invalid(`Search results are limited to ${RESULT_CAP} per query; page through a narrower query.`)

    const visible = [...contacts.values()].flatMap((contact) => {
      const version = contact.versions.filter((candidate) => candidate.visibleAt <= now()).at(-1)
      return version ? [{ id: contact.id, properties: version.properties }] : []
    })
    const matching = visible.filter((contact) => (body.filterGroups as any[]).length === 0 || (body.filterGroups as any[]).some((group) => group.filters.every((filter: any) => matches(contact.properties, filter))))
    const sort = (body.sorts as any[] | undefined)?.[0]
    if (sort) {
      const direction = sort.direction === 'DESCENDING' ? -1 : 1
      matching.sort((a, b) => direction * (compare(a.properties[sort.propertyName], b.properties[sort.propertyName]) || Number(a.id) - Number(b.id)))
    }
    const requested = Array.isArray(body.properties) && body.properties.length ? [...body.properties, ...ALWAYS_RETURNED] : DEFAULT_PROPERTIES
    const results = matching.slice(after, after + limit).map((contact) => ({
      id: contact.id,
      properties: Object.fromEntries(requested.map((name) => [name, contact.properties[name] ?? null])),
      createdAt: contact.properties.createdate,
      updatedAt: contact.properties.lastmodifieddate,
      archived: false,
    }))
    const next = after + limit < matching.length ? { paging: { next: { after: String(after + limit), link: `?after=${after + limit}` } } } : {}
    return reply(200, { total: matching.length, results, ...next })
  }

  function checkSearch(body: Record<string, any>): string | undefined {
    const groups = body.filterGroups ?? []
    if (!Array.isArray(groups) || groups.length > 5) return 'Too many filter groups: at most 5 are allowed.'
    let total = 0
    for (const group of groups) {
      if (!isObject(group) || !Array.isArray(group.filters) || group.filters.length === 0) return 'Each filter group needs at least one filter.'
      if (group.filters.length > 10) return 'Too many filters in a group: at most 10 are allowed.'
      total += group.filters.length
      for (const filter of group.filters) {
        if (!isObject(filter) || !OPERATORS.has(filter.operator)) return `Invalid operator: ${String(filter?.operator)}`
        if (!known.has(filter.propertyName)) return 'There was a problem with the request.'
        if (isDate(filter.propertyName) && ['LT', 'LTE', 'GT', 'GTE', 'EQ', 'NEQ'].includes(filter.operator) && !/^\d+$/.test(String(filter.value))) return 'There was a problem with the request.'
      }
    }
    if (total > 25) return 'Too many filters: at most 25 are allowed across all filter groups.'
    if (Array.isArray(body.sorts) && (body.sorts.length > 1 || body.sorts.some((sort: any) => !known.has(sort?.propertyName)))) return 'There was a problem with the request.'
    if (body.limit !== undefined && (!Number.isInteger(body.limit) || body.limit < 1 || body.limit > 200)) return 'limit must be between 1 and 200.'
    if (body.after !== undefined && !/^\d+$/.test(String(body.after))) return 'after must be a paging token from a previous page.'
    return undefined
  }

  const server = await startFakeServer(async (request) => {
    const path = request.path.split('?')[0]!
    if (request.method === 'POST' && path === '/oauth/v1/token' && init.oauth) return refresh(new URLSearchParams(request.body), init.oauth)
    if (request.method === 'POST' && SEARCH_PATH.test(path)) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
      return search(request)
    }
    return reply(404, { status: 'error', message: 'Resource not found', correlationId: randomUUID(), category: 'OBJECT_NOT_FOUND' })
  })

  /** The refresh-token grant (OAuth tokens guide): a 30-minute access token; HubSpot's error shape for a bad token. */
  function refresh(form: URLSearchParams, app: NonNullable<FakeHubspotInit['oauth']>): FakeReply {
    if (form.get('client_id') !== app.clientId || form.get('client_secret') !== app.clientSecret) {
      return reply(400, { status: 'BAD_CLIENT_ID', message: 'missing or invalid client_id', error: 'invalid_client', error_description: 'missing or invalid client_id', correlationId: randomUUID() })
    }
    if (form.get('grant_type') !== 'refresh_token' || form.get('refresh_token') !== app.refreshToken) {
      return reply(400, { status: 'BAD_REFRESH_TOKEN', message: 'missing or unknown refresh token', error: 'invalid_grant', error_description: 'missing or unknown refresh token', correlationId: randomUUID() })
    }
    return reply(200, { token_type: 'bearer', access_token: accessToken, refresh_token: app.refreshToken, expires_in: 1800 })
  }

  return {
    ...server,
    accessToken,
    searches,
    addContact: ({ at, ...properties }) => {
      const id = String(nextId++)
      contacts.set(id, { id, versions: [] })
      write(id, { lifecyclestage: 'lead', ...properties, hs_object_id: id, createdate: at.toISOString() }, at)
      return id
    },
    update: (id, properties, at) => write(id, properties, at),
    throttleNext: () => void throttled++,
    delay: (ms) => void (delayMs = ms),
  }
}

function isDate(property: string): boolean {
  return property.endsWith('date')
}

/** Dates compare as instants (values are ISO strings, filters epoch ms), everything else as text. */
function instant(value: string | undefined): number {
  return value === undefined ? Number.NaN : /^\d+$/.test(value) ? Number(value) : Date.parse(value)
}

function compare(a: string | undefined, b: string | undefined): number {
  const [x, y] = [instant(a), instant(b)]
  if (!Number.isNaN(x) && !Number.isNaN(y)) return x - y
  return (a ?? '').localeCompare(b ?? '')
}

function matches(properties: Record<string, string>, filter: Record<string, any>): boolean {
  const actual = properties[filter.propertyName]
  const value = filter.value === undefined ? undefined : String(filter.value)
  switch (filter.operator) {
    case 'HAS_PROPERTY': return actual !== undefined && actual !== ''
    case 'NOT_HAS_PROPERTY': return actual === undefined || actual === ''
    case 'IN': return actual !== undefined && (filter.values as unknown[] ?? []).map(String).includes(actual)
    case 'NOT_IN': return actual === undefined || !(filter.values as unknown[] ?? []).map(String).includes(actual)
  }
  if (actual === undefined) return false
  const order = isDate(filter.propertyName) ? instant(actual) - instant(value) : compare(actual, value)
  switch (filter.operator) {
    case 'EQ': return isDate(filter.propertyName) ? order === 0 : actual.toLowerCase() === (value ?? '').toLowerCase()
    case 'NEQ': return isDate(filter.propertyName) ? order !== 0 : actual.toLowerCase() !== (value ?? '').toLowerCase()
    case 'LT': return order < 0
    case 'LTE': return order <= 0
    case 'GT': return order > 0
    case 'GTE': return order >= 0
  }
  return false
}
