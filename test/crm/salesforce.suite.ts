import { afterEach, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import salesforce, { salesforceOptions, type SalesforceOptions } from '../../adapters/crm/salesforce/index.ts'
import { SESSION_CACHE_SECONDS, sessionCacheKey } from '../../adapters/crm/salesforce/auth.ts'
import { leadQuery, soqlDateTime, soqlString } from '../../adapters/crm/salesforce/map.ts'
import type { CrmCredentialStore } from '../../core/registry.ts'
import { CrmAuthError, CrmPollError, CrmRateLimitError } from '../../adapters/crm/shared/errors.ts'
import { CONTRACT_NOW, memoryCache, pollContext, testCrmPoller, type ContractCrm } from '../contract/crm-poller.ts'
import { salesforceErrors, startFakeSalesforce, type FakeSalesforce } from '../fakes/salesforce.ts'

const poller = salesforce
const CLIENT_ID = '3MVG9fakeConsumerKey.fake'
const CLIENT_SECRET = 'F4K3C0NSUM3RS3CR3T0000000000000000'
const REFRESH_TOKEN = '5Aep861fakeRefreshToken'
const BAD_REFRESH_TOKEN = '5Aep861revokedRefreshToken'

async function contractCrm(): Promise<ContractCrm> {
  const fake = await startFakeSalesforce({ clientSecret: CLIENT_SECRET })
  return {
    url: fake.url,
    addLead: (email, at, qualified) => fake.addLead({ email, status: qualified ? 'Qualified' : 'Working', at }),
    qualify: (id, at) => fake.updateLead(id, { status: 'Qualified' }, at),
    throttleNext: fake.throttleNext,
    delay: fake.delay,
    dataRequests: fake.dataRequests,
    queue: fake.queue,
    requests: () => fake.requests,
    close: fake.close,
  }
}

const configFor = (url: string, loginUrl = url) => ({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, refreshToken: REFRESH_TOKEN, eventName: 'demo_booked', loginUrl, baseUrl: url, pageSize: 200 })

testCrmPoller<SalesforceOptions>({
  poller,
  folder: 'salesforce',
  start: contractCrm,
  options: (crm) => configFor(crm.url),
  badCredentials: (crm) => ({ ...configFor(crm.url), refreshToken: BAD_REFRESH_TOKEN }),
  secrets: () => [CLIENT_SECRET, REFRESH_TOKEN, BAD_REFRESH_TOKEN],
  invalidOptions: [
    { clientId: CLIENT_ID, eventName: 'demo_booked' },
    { refreshToken: REFRESH_TOKEN, eventName: 'demo_booked' },
    { clientId: CLIENT_ID, refreshToken: REFRESH_TOKEN, eventName: 'demo_booked', statuses: [] },
    { clientId: CLIENT_ID, refreshToken: REFRESH_TOKEN, eventName: 'demo_booked', modifiedField: 'UpdatedAt' },
    { clientId: CLIENT_ID, refreshToken: REFRESH_TOKEN, eventName: 'demo_booked', loginUrl: 'login.salesforce.com' },
    { clientId: CLIENT_ID, refreshToken: REFRESH_TOKEN, eventName: 'demo_booked', pageSize: 100 },
    { clientId: CLIENT_ID, refreshToken: REFRESH_TOKEN, eventName: 'demo_booked', accessToken: 'x' },
  ],
  pagingRecords: 450,
})

describe('salesforce soql', () => {
  it('quotes strings with SOQL escapes and writes datetimes unquoted in UTC, whole seconds', () => {
    expect(soqlString('Won\'t buy \\ "now"\n')).toBe('\'Won\\\'t buy \\\\ \\"now\\"\\n\'')
    expect(soqlDateTime(new Date('2026-03-02T10:45:59.999Z'))).toBe('2026-03-02T10:45:59Z')
    expect(leadQuery({ statuses: ['Qualified', 'Closed - Converted'], modifiedField: 'SystemModstamp' }, new Date('2026-03-02T10:45:00Z'))).toBe(
      'SELECT Id, Email, Status, SystemModstamp FROM Lead WHERE Status IN (\'Qualified\', \'Closed - Converted\') AND Email != null AND SystemModstamp >= 2026-03-02T10:45:00Z ORDER BY SystemModstamp ASC, Id ASC',
    )
  })
})

describe('salesforce poller', () => {
  let fake: FakeSalesforce
  afterEach(async () => {
    await fake?.close()
  })
  const at = (minutesAgo: number) => new Date(CONTRACT_NOW.getTime() - minutesAgo * 60_000)
  const options = (overrides: Record<string, unknown> = {}) => v.parse(salesforceOptions, { ...configFor(fake.url, fake.loginUrl), ...overrides })

  it('defaults: login.salesforce.com, status Qualified, LastModifiedDate, 2,000 a batch, queries on instance_url', () => {
    expect(v.parse(salesforceOptions, { clientId: CLIENT_ID, refreshToken: REFRESH_TOKEN, eventName: 'x' })).toEqual({
      clientId: CLIENT_ID, refreshToken: REFRESH_TOKEN, eventName: 'x', statuses: ['Qualified'], modifiedField: 'LastModifiedDate',
      loginUrl: 'https://login.salesforce.com', overlapMinutes: 15, initialLookbackDays: 30, pageSize: 2000,
    })
  })

  it('refreshes a session at loginUrl, queries the instance_url it returns, and reuses the cached session', async () => {
    fake = await startFakeSalesforce({ clientSecret: CLIENT_SECRET, loginPath: '/login-host' })
    fake.addLead({ email: 'ada@example.com', status: 'Qualified', at: at(30) })
    const cache = memoryCache()
    const opts = options({ baseUrl: undefined })
    const first = await poller.poll(opts, undefined, pollContext({ cache }))
    expect(first.qualified).toEqual([{ email: 'ada@example.com', eventName: 'demo_booked' }])
    expect(fake.tokenRequests).toEqual([{ grant_type: 'refresh_token', client_id: CLIENT_ID, client_secret: CLIENT_SECRET, refresh_token: REFRESH_TOKEN }])
    expect(fake.requests[0]!.path).toBe('/login-host/services/oauth2/token')
    expect(fake.requests[1]!.path).toMatch(/^\/services\/data\/v66\.0\/query\?q=/)
    await poller.poll(opts, first.cursor, pollContext({ cache }))
    expect(fake.tokenRequests).toHaveLength(1)
    const key = sessionCacheKey(opts)
    expect(cache.entries.get(key)!.ttlSeconds).toBe(SESSION_CACHE_SECONDS)
    for (const secret of [CLIENT_SECRET, REFRESH_TOKEN]) expect(key).not.toContain(secret)
  })

  it('an expired session (401 INVALID_SESSION_ID) is renewed once and the query repeated', async () => {
    fake = await startFakeSalesforce({ clientSecret: CLIENT_SECRET })
    fake.addLead({ email: 'ada@example.com', status: 'Qualified', at: at(30) })
    const cache = memoryCache()
    await poller.poll(options(), undefined, pollContext({ cache }))
    fake.expireSessions()
    const again = await poller.poll(options(), undefined, pollContext({ cache }))
    expect(again.qualified).toHaveLength(1)
    expect(fake.tokenRequests).toHaveLength(2)
  })

  it('sends the SOQL with the cursor − overlap, a quoted status list and the batch size; pages on nextRecordsUrl', async () => {
    fake = await startFakeSalesforce({ clientSecret: CLIENT_SECRET })
    fake.addLead({ email: 'wont@example.com', status: 'Won\'t Buy \\ Later', at: at(30) })
    fake.addLead({ email: 'open@example.com', status: 'Open', at: at(20) })
    const result = await poller.poll(options({ statuses: ['Won\'t Buy \\ Later'] }), '2026-03-02T11:00:00.000Z', pollContext())
    expect(result.qualified).toEqual([{ email: 'wont@example.com', eventName: 'demo_booked' }])
    expect(fake.queries[0]).toEqual({
      soql: 'SELECT Id, Email, Status, LastModifiedDate FROM Lead WHERE Status IN (\'Won\\\'t Buy \\\\ Later\') AND Email != null AND LastModifiedDate >= 2026-03-02T10:45:00Z ORDER BY LastModifiedDate ASC, Id ASC',
      batchSize: '200',
    })
    expect(result.cursor).toBe(at(30).toISOString())
  })

  it('REQUEST_LIMIT_EXCEEDED (TotalRequests) → CrmRateLimitError waiting an hour, quoting the usage header', async () => {
    fake = await startFakeSalesforce({ clientSecret: CLIENT_SECRET })
    fake.throttleNext()
    const error = await poller.poll(options(), undefined, pollContext()).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CrmRateLimitError)
    expect(error).toMatchObject({ retryAfterMs: 3_600_000, status: 403 })
    expect((error as Error).message).toMatch(/REQUEST_LIMIT_EXCEEDED: TotalRequests Limit exceeded\..*api-usage=15001\/15000/)
  })

  it('token errors say what to fix: invalid_grant, invalid_client_id, invalid_client', async () => {
    fake = await startFakeSalesforce({ clientSecret: CLIENT_SECRET })
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ refreshToken: BAD_REFRESH_TOKEN }, /invalid_grant: expired access\/refresh token.*authorize the connected app again/],
      [{ clientId: '3MVG9other' }, /invalid_client_id: client identifier invalid.*Consumer Key/],
      [{ clientSecret: 'wrong-secret-000000' }, /invalid_client: invalid client credentials.*Consumer Secret/],
    ]
    for (const [overrides, message] of cases) {
      const error = await poller.poll(options(overrides), undefined, pollContext()).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(CrmAuthError)
      expect((error as Error).message).toMatch(message)
      expect((error as Error).message).not.toContain('wrong-secret-000000')
    }
  })

  it('a query Salesforce refuses → a permanent CrmPollError quoting errorCode and message', async () => {
    fake = await startFakeSalesforce({ clientSecret: CLIENT_SECRET })
    const cache = memoryCache()
    await poller.poll(options(), undefined, pollContext({ cache }))
    fake.queue(salesforceErrors.malformed('unexpected token: \'FROM\''))
    const error = await poller.poll(options(), undefined, pollContext({ cache })).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CrmPollError)
    expect(error).toMatchObject({ retryable: false, status: 400 })
    expect((error as Error).message).toMatch(/MALFORMED_QUERY: unexpected token: 'FROM'.*statuses/)
  })

  it('the fake refuses what Salesforce refuses: a quoted datetime, an unknown column', async () => {
    fake = await startFakeSalesforce({ clientSecret: CLIENT_SECRET })
    const token = await fetch(`${fake.loginUrl}/services/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'refresh_token', client_id: CLIENT_ID, client_secret: CLIENT_SECRET, refresh_token: REFRESH_TOKEN }) })
    const { access_token: session } = await token.json() as { access_token: string }
    const ask = async (soql: string) => (await fetch(`${fake.url}/services/data/v66.0/query?q=${encodeURIComponent(soql)}`, { headers: { authorization: `Bearer ${session}` } })).json()
    expect(await ask('SELECT Id FROM Lead WHERE LastModifiedDate > \'2026-03-02T10:00:00Z\'')).toMatchObject([{ errorCode: 'INVALID_FIELD' }])
    expect(await ask('SELECT Id, Score__x FROM Lead')).toMatchObject([{ errorCode: 'INVALID_FIELD' }])
    expect(await ask('SELECT Id FROM Lead WHERE Status IN (Qualified)')).toMatchObject([{ errorCode: 'MALFORMED_QUERY' }])
  })
})

/** The scheduler's store in memory: one value per basis, as the crm_poll_state row keeps it. */
function memoryCredentials(): CrmCredentialStore & { stored: () => { basis: string, value: string } | undefined } {
  let row: { basis: string, value: string } | undefined
  return {
    stored: () => row,
    get: async (basis) => row?.basis === basis ? row.value : null,
    set: async (basis, value) => void (row = { basis, value }),
  }
}

describe('salesforce refresh-token rotation', () => {
  let fake: FakeSalesforce
  afterEach(async () => {
    await fake?.close()
  })
  const at = (minutesAgo: number) => new Date(CONTRACT_NOW.getTime() - minutesAgo * 60_000)
  const options = (overrides: Record<string, unknown> = {}) => v.parse(salesforceOptions, { ...configFor(fake.url, fake.loginUrl), ...overrides })

  it('stores each rotated refresh token and sends it at the next refresh, so polling goes on after the session expires', async () => {
    fake = await startFakeSalesforce({ clientSecret: CLIENT_SECRET, rotate: true })
    fake.addLead({ email: 'ada@example.com', status: 'Qualified', at: at(30) })
    const credentials = memoryCredentials()
    const cache = memoryCache()
    const first = await poller.poll(options(), undefined, pollContext({ cache, credentials }))
    expect(first.qualified).toHaveLength(1)
    const issued = fake.validRefreshTokens()[0]!
    expect(issued).not.toBe(REFRESH_TOKEN)
    expect(credentials.stored()?.value).toBe(issued)
    for (const secret of [REFRESH_TOKEN, issued]) expect(credentials.stored()!.basis).not.toContain(secret)

    for (let round = 0; round < 3; round++) {
      fake.expireSessions()
      const again = await poller.poll(options(), first.cursor, pollContext({ cache, credentials }))
      expect(again.qualified).toEqual([{ email: 'ada@example.com', eventName: 'demo_booked' }])
    }
    expect(fake.tokenRequests.map((form) => form.refresh_token)).toEqual([REFRESH_TOKEN, issued, expect.any(String), expect.any(String)])
    expect(new Set(fake.tokenRequests.map((form) => form.refresh_token)).size).toBe(4)
    expect(credentials.stored()?.value).toBe(fake.validRefreshTokens()[0])
  })

  it('without a store the configured token is sent again, and Salesforce refuses it with invalid_grant (what happened before)', async () => {
    fake = await startFakeSalesforce({ clientSecret: CLIENT_SECRET, rotate: true })
    await poller.poll(options(), undefined, pollContext())
    const error = await poller.poll(options(), undefined, pollContext()).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CrmAuthError)
    expect((error as Error).message).toMatch(/invalid_grant: expired access\/refresh token/)
    // The reuse revoked the chain: not even the rotated token works any more.
    expect(fake.validRefreshTokens()).toEqual([])
  })

  it('a newly configured refreshToken is used as given, not the token stored for the old one, and its rotations are stored', async () => {
    fake = await startFakeSalesforce({ clientSecret: CLIENT_SECRET, rotate: true })
    const credentials = memoryCredentials()
    await poller.poll(options(), undefined, pollContext({ credentials }))
    const pasted = fake.authorize()
    await poller.poll(options({ refreshToken: pasted }), undefined, pollContext({ credentials }))
    expect(fake.tokenRequests.at(-1)!.refresh_token).toBe(pasted)
    expect(credentials.stored()?.value).not.toBe(pasted)
    expect(fake.validRefreshTokens()).toContain(credentials.stored()!.value)
    fake.expireSessions()
    await poller.poll(options({ refreshToken: pasted }), undefined, pollContext({ credentials }))
    expect(fake.tokenRequests.at(-1)!.refresh_token).not.toBe(pasted)
  })

  it('a stored token Salesforce refused says so and how to start again, quoting no token', async () => {
    fake = await startFakeSalesforce({ clientSecret: CLIENT_SECRET, rotate: true })
    const credentials = memoryCredentials()
    await poller.poll(options(), undefined, pollContext({ credentials }))
    const stored = credentials.stored()!.value
    // Someone else used the stored token (a copy of the database): Salesforce rotated it away.
    await fetch(`${fake.loginUrl}/services/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'refresh_token', client_id: CLIENT_ID, client_secret: CLIENT_SECRET, refresh_token: stored }) })
    const error = await poller.poll(options(), undefined, pollContext({ credentials })).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CrmAuthError)
    expect(error).toMatchObject({ retryable: false })
    expect((error as Error).message).toMatch(/refused the rotated refresh token dcgate stored \(invalid_grant: expired access\/refresh token\).*set the new refreshToken/)
    for (const secret of [stored, REFRESH_TOKEN, CLIENT_SECRET]) expect((error as Error).message).not.toContain(secret)
  })
})
