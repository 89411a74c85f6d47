import { afterEach, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import hubspot, { hubspotOptions, type HubspotOptions } from '../../adapters/crm/hubspot/index.ts'
import { CrmAuthError, CrmPollError, CrmRateLimitError } from '../../adapters/crm/shared/errors.ts'
import { CONTRACT_NOW, pollContext, testCrmPoller, type ContractCrm } from '../contract/crm-poller.ts'
import { hubspotErrors, startFakeHubspot, type FakeHubspot } from '../fakes/hubspot.ts'

const poller = hubspot
const BAD_TOKEN = 'pat-na1-99999999-8888-7777-6666-000000000000'

async function contractCrm(): Promise<ContractCrm> {
  const fake = await startFakeHubspot()
  return {
    url: fake.url,
    addLead: (email, at, qualified) => fake.addContact({ email, lifecyclestage: qualified ? 'salesqualifiedlead' : 'lead', at }),
    qualify: (id, at) => fake.update(id, { lifecyclestage: 'salesqualifiedlead' }, at),
    throttleNext: fake.throttleNext,
    delay: fake.delay,
    dataRequests: () => fake.searches.length,
    queue: fake.queue,
    requests: () => fake.requests,
    close: fake.close,
  }
}

const configFor = (url: string, fake?: FakeHubspot) => ({ accessToken: fake?.accessToken ?? 'pat-na1-11111111-2222-3333-4444-555555555555', eventName: 'demo_booked', pageSize: 100, baseUrl: url })

testCrmPoller<HubspotOptions>({
  poller,
  folder: 'hubspot',
  start: contractCrm,
  options: (crm) => configFor(crm.url),
  badCredentials: (crm) => ({ ...configFor(crm.url), accessToken: BAD_TOKEN }),
  secrets: () => ['pat-na1-11111111-2222-3333-4444-555555555555', BAD_TOKEN],
  invalidOptions: [
    { eventName: 'demo_booked' },
    { accessToken: 'pat', eventName: 'demo booked' },
    { accessToken: 'pat', eventName: 'demo_booked', values: [] },
    { accessToken: 'pat', eventName: 'demo_booked', values: ['a', 'b', 'c', 'd', 'e', 'f'] },
    { accessToken: 'pat', eventName: 'demo_booked', property: 'Lifecycle Stage' },
    { accessToken: 'pat', eventName: 'demo_booked', pageSize: 101 },
    { accessToken: 'pat', eventName: 'demo_booked', overlapMinutes: 0 },
    { accessToken: 'pat', eventName: 'demo_booked', token: 'misspelt' },
  ],
  pagingRecords: 250,
})

describe('hubspot poller', () => {
  let fake: FakeHubspot
  afterEach(async () => {
    await fake?.close()
  })
  const options = (overrides: Record<string, unknown> = {}) => v.parse(hubspotOptions, { ...configFor(fake.url, fake), ...overrides })
  const at = (minutesAgo: number) => new Date(CONTRACT_NOW.getTime() - minutesAgo * 60_000)

  it('defaults to lifecyclestage = salesqualifiedlead on lastmodifieddate, 15 minutes of overlap, 100 a page, the public API', () => {
    expect(v.parse(hubspotOptions, { accessToken: 'pat', eventName: 'demo_booked' })).toEqual({
      accessToken: 'pat', eventName: 'demo_booked', property: 'lifecyclestage', values: ['salesqualifiedlead'], modifiedProperty: 'lastmodifieddate',
      overlapMinutes: 15, initialLookbackDays: 30, pageSize: 100, baseUrl: 'https://api.hubapi.com',
    })
  })

  it('sends the documented search: Bearer token, one group per value, GTE cursor − overlap in epoch ms, ascending, 100 a page', async () => {
    fake = await startFakeHubspot()
    fake.addContact({ email: 'ada@example.com', lifecyclestage: 'salesqualifiedlead', at: at(30) })
    await poller.poll(options({ values: ['salesqualifiedlead', 'opportunity'] }), '2026-03-02T11:00:00.000Z', pollContext())
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${fake.accessToken}`)
    const since = String(Date.parse('2026-03-02T10:45:00.000Z'))
    expect(fake.searches[0]).toEqual({
      filterGroups: [
        { filters: [{ propertyName: 'lifecyclestage', operator: 'EQ', value: 'salesqualifiedlead' }, { propertyName: 'lastmodifieddate', operator: 'GTE', value: since }] },
        { filters: [{ propertyName: 'lifecyclestage', operator: 'EQ', value: 'opportunity' }, { propertyName: 'lastmodifieddate', operator: 'GTE', value: since }] },
      ],
      sorts: [{ propertyName: 'lastmodifieddate', direction: 'ASCENDING' }],
      properties: ['email', 'lifecyclestage', 'lastmodifieddate'],
      limit: 100,
    })
  })

  it('searches on the date-based path (2026-09), not the v1–v3 paths HubSpot stops supporting in September 2027', async () => {
    fake = await startFakeHubspot()
    fake.addContact({ email: 'ada@example.com', lifecyclestage: 'salesqualifiedlead', at: at(30) })
    const result = await poller.poll(options(), undefined, pollContext())
    expect(fake.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['POST /crm/objects/2026-09/contacts/search'])
    expect(result.qualified).toEqual([{ email: 'ada@example.com', eventName: 'demo_booked' }])
  })

  it('catches contacts that moved past SQL when their stages are listed, and reads a lead-status property', async () => {
    fake = await startFakeHubspot()
    fake.addContact({ email: 'sql@example.com', lifecyclestage: 'salesqualifiedlead', at: at(40) })
    fake.addContact({ email: 'opp@example.com', lifecyclestage: 'opportunity', at: at(30) })
    fake.addContact({ email: 'mql@example.com', lifecyclestage: 'marketingqualifiedlead', at: at(20) })
    fake.addContact({ email: 'status@example.com', hs_lead_status: 'OPEN_DEAL', at: at(10) })
    const stages = await poller.poll(options({ values: ['salesqualifiedlead', 'opportunity', 'customer'] }), undefined, pollContext())
    expect(stages.qualified.map((lead) => lead.email).sort()).toEqual(['opp@example.com', 'sql@example.com'])
    const status = await poller.poll(options({ property: 'hs_lead_status', values: ['OPEN_DEAL'] }), undefined, pollContext())
    expect(status.qualified).toEqual([{ email: 'status@example.com', eventName: 'demo_booked' }])
  })

  it('can key the window on the date the contact became an SQL instead of any modification', async () => {
    fake = await startFakeHubspot()
    const id = fake.addContact({ email: 'ada@example.com', lifecyclestage: 'salesqualifiedlead', at: at(300) })
    fake.update(id, { firstname: 'Ada' }, at(5))
    const opts = options({ modifiedProperty: 'hs_lifecyclestage_salesqualifiedlead_date' })
    const result = await poller.poll(opts, '2026-03-02T10:00:00.000Z', pollContext())
    expect(result.qualified).toEqual([])
    expect(fake.searches[0]!.sorts).toEqual([{ propertyName: 'hs_lifecyclestage_salesqualifiedlead_date', direction: 'ASCENDING' }])
  })

  it('the cursor is the newest lastmodifieddate seen, never moving back; the overlap catches a change the index showed late', async () => {
    let clock = CONTRACT_NOW.getTime()
    fake = await startFakeHubspot({ now: () => clock, indexLagMs: 60_000 })
    fake.addContact({ email: 'ada@example.com', lifecyclestage: 'salesqualifiedlead', at: at(10) })
    clock += 60_000
    const first = await poller.poll(options(), undefined, pollContext())
    expect(first.cursor).toBe(at(10).toISOString())
    // Modified two minutes before Ada's change reached the index, then the poll ran before it was indexed:
    fake.addContact({ email: 'late@example.com', lifecyclestage: 'salesqualifiedlead', at: at(12) })
    const missed = await poller.poll(options(), first.cursor, pollContext())
    expect(missed.qualified.map((lead) => lead.email)).not.toContain('late@example.com')
    expect(missed.cursor).toBe(first.cursor)
    clock += 60_000
    const caught = await poller.poll(options(), missed.cursor, pollContext())
    expect(caught.qualified.map((lead) => lead.email)).toContain('late@example.com')
    expect(caught.cursor).toBe(at(10).toISOString())
  })

  it('re-anchors on the newest contact before the 10,000-result cap instead of paging into HubSpot\'s 400', async () => {
    fake = await startFakeHubspot()
    for (let i = 0; i < 10_150; i++) fake.addContact({ email: `c${i}@example.com`, lifecyclestage: 'salesqualifiedlead', at: new Date(at(600).getTime() + i * 1000) })
    // 103 pages: under a loaded CI machine they take longer than the default poll signal's 15 s.
    const result = await poller.poll(options(), undefined, pollContext({ signal: AbortSignal.timeout(55_000) }))
    expect(new Set(result.qualified.map((lead) => lead.email)).size).toBe(10_150)
    const afters = fake.searches.map((search) => Number(search.after ?? 0))
    expect(Math.max(...afters)).toBe(9_900)
    expect(afters.filter((after) => after === 0)).toHaveLength(2)
    expect(result.cursor).toBe(new Date(at(600).getTime() + 10_149 * 1000).toISOString())
  }, 60_000)

  it('a 429 with Retry-After waits that long; the search SECONDLY policy without it waits a second', async () => {
    fake = await startFakeHubspot()
    fake.queue({ ...hubspotErrors.secondlyLimit(), headers: { 'Retry-After': '7' } })
    const withHeader = await poller.poll(options(), undefined, pollContext()).catch((error: unknown) => error)
    expect(withHeader).toMatchObject({ retryAfterMs: 7000 })
    fake.throttleNext()
    const secondly = await poller.poll(options(), undefined, pollContext()).catch((error: unknown) => error)
    expect(secondly).toBeInstanceOf(CrmRateLimitError)
    expect(secondly).toMatchObject({ retryAfterMs: 1000, status: 429 })
    expect((secondly as Error).message).toContain('You have reached your secondly limit.')
  })

  it('a token without the contacts scope → CrmAuthError naming crm.objects.contacts.read', async () => {
    fake = await startFakeHubspot({ tokenWithoutScope: 'pat-na1-noscope' })
    const error = await poller.poll(options({ accessToken: 'pat-na1-noscope' }), undefined, pollContext()).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CrmAuthError)
    expect((error as Error).message).toMatch(/MISSING_SCOPES.*crm\.objects\.contacts\.read/)
  })

  it('a service key is sent as the Bearer token, as a private app token is', async () => {
    const serviceKey = 'fake-service-key-0a1b2c3d4e5f60718293a4b5c6d7e8f9' // HubSpot documents no format for service keys
    fake = await startFakeHubspot({ accessToken: serviceKey })
    fake.addContact({ email: 'ada@example.com', lifecyclestage: 'salesqualifiedlead', at: at(30) })
    const result = await poller.poll(options({ accessToken: serviceKey }), undefined, pollContext())
    expect(result.qualified).toEqual([{ email: 'ada@example.com', eventName: 'demo_booked' }])
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${serviceKey}`)
  })

  it('an OAuth app (the dashboard\'s Connect button) polls with an access token from its refresh token, fetched once', async () => {
    const app = { clientId: 'dcgate-app', clientSecret: 'app-secret', refreshToken: 'na1-refresh-token' }
    fake = await startFakeHubspot({ oauth: app })
    fake.addContact({ email: 'ada@example.com', lifecyclestage: 'salesqualifiedlead', at: at(30) })
    const connected = options({ accessToken: undefined, ...app })
    const ctx = pollContext()
    expect((await poller.poll(connected, undefined, ctx)).qualified).toEqual([{ email: 'ada@example.com', eventName: 'demo_booked' }])
    await poller.poll(connected, undefined, ctx)
    expect(fake.requests.filter((r) => r.path === '/oauth/v1/token')).toHaveLength(1)
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${fake.accessToken}`)

    const error = await poller.poll({ ...connected, refreshToken: 'na1-deleted' }, undefined, pollContext()).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CrmAuthError)
    expect((error as Error).message).toContain('HubSpot OAuth refused the refresh token with invalid_grant: missing or unknown refresh token')
    expect((error as Error).message).toContain('connect HubSpot again')
  })

  it('a refused token says where to get one today: a service key, since private apps can no longer be created', async () => {
    fake = await startFakeHubspot()
    const error = await poller.poll(options({ accessToken: BAD_TOKEN }), undefined, pollContext()).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CrmAuthError)
    expect((error as Error).message).toMatch(/INVALID_AUTHENTICATION.*service key \(Development → Keys → Service keys\) with the crm\.objects\.contacts\.read scope/)
    expect((error as Error).message).not.toContain(BAD_TOKEN)
  })

  it('a property HubSpot does not know → a permanent CrmPollError quoting VALIDATION_ERROR and naming the options to check', async () => {
    fake = await startFakeHubspot()
    const error = await poller.poll(options({ property: 'qualification_stage' }), undefined, pollContext()).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CrmPollError)
    expect(error).toMatchObject({ retryable: false, status: 400 })
    expect((error as Error).message).toMatch(/VALIDATION_ERROR: There was a problem with the request\..*property, values and modifiedProperty/)
  })
})
