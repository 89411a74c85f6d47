import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeTestPlatform, testPlatform } from '../delivery/test-platform.ts'
import type { FakeServer } from '../fakes/server.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { MAX_VISIT_IDENTITIES } from '../../plugins/capture/queries.ts'

// A visit keeps every identity it was given: two people on one computer, or one person with two addresses. A
// server-side conversion for either finds the visit's click ids, and an erasure for either anonymises the visit.
const US_IP = '73.162.0.1'
let app: TestApp
let fake: FakeServer
let copKey: string
let key: string

beforeAll(async () => {
  fake = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['intake', 'capture', 'dsar'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    delivery: { workerIntervalMs: 25 },
    mail: { from: 'Privacy <privacy@shop.example>' },
    sites: [{ id: 'shop', name: 'Shop', domains: ['shop.example'], destinations: { testads: { baseUrl: fake.url, token: 'good' } } }],
  }, { adapters: [testPlatform], builtInPlugins })
  copKey = app.dcgate.context.sites.byId('shop')!.copKey
  key = await app.createKey('shop')
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const post = (path: string, body: unknown, headers: Record<string, string> = {}) => app.request(path, {
  method: 'POST', headers: { 'content-type': 'text/plain', 'x-forwarded-for': US_IP, ...headers }, body: JSON.stringify(body),
})
const identify = (session: string, email: string) => post(`/identify?cop_key=${copKey}`, { v: 1, sid: session, vid: 'visitor-0042', email, via: 'sdk', consent: 'unknown' })

async function visitWithHits(session: string): Promise<Record<string, any>> {
  await expect.poll(async () => (await sql<{ page_count: number }[]>('select page_count from visits where session_id = ?', [session]))[0]?.page_count).toBe(1)
  return (await sql<Record<string, any>[]>('select * from visits where session_id = ?', [session]))[0]!
}

async function conversionFor(email: string, messageId: string) {
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({ event: 'Lead', messageId, context: { traits: { email } } }),
  })
  return (await response.json() as { events: { identity: unknown }[] }).events[0]!.identity
}

describe('a visit identified twice', () => {
  it('matches conversions for either email, and an erasure of the first email anonymises it', async () => {
    const session = 'sess-two-identities-1'
    await post(`/collect?cop_key=${copKey}`, { v: 1, sid: session, vid: 'visitor-0042', hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/?gclid=g-two' }], clickIds: { gclid: 'g-two' } })
    await visitWithHits(session)
    expect((await identify(session, 'first.person@example.com')).status).toBe(202)
    expect((await identify(session, 'second.person@example.com')).status).toBe(202)
    expect((await identify(session, 'first.person@example.com')).status).toBe(202) // again: kept once
    const [row] = await sql<{ email: string, n: number }[]>('select email, cardinality(email_hashes) as n from visits where session_id = ?', [session])
    expect(row).toEqual({ email: 'first.person@example.com', n: 2 })

    // Server-side conversions for either email recover the visit's click id.
    expect(await conversionFor('second.person@example.com', 'lead-two-ids-b')).toEqual({ matched: 1, created: 0, enriched: ['gclid'] })
    expect(await conversionFor('First.Person@example.com', 'lead-two-ids-a')).toEqual({ matched: 1, created: 0, enriched: ['gclid'] })

    // The identification order does not matter to the erasure: the second email is the visit's latest, erase the other.
    await identify(session, 'second.person@example.com')
    const erased = await app.request('/api/v1/data-deletion', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, body: JSON.stringify({ email: 'first.person@example.com' }),
    })
    expect(erased.status).toBe(200)
    expect(await sql('select email, email_hash, email_hashes, ip_address, user_agent, visitor_id, click_ids, landing_url from visits where session_id = ?', [session]))
      .toEqual([{ email: null, email_hash: null, email_hashes: null, ip_address: null, user_agent: null, visitor_id: null, click_ids: {}, landing_url: 'https://shop.example/' }])
    // Its conversions lost what identified the person too.
    expect(await sql(`select message_id, click_ids from conversions where message_id = 'lead-two-ids-a'`)).toEqual([{ message_id: 'lead-two-ids-a', click_ids: {} }])
  })

  it(`keeps at most ${MAX_VISIT_IDENTITIES} identities on one visit (a page calling identifyUser in a loop)`, async () => {
    const session = 'sess-many-identities-1'
    for (let i = 0; i <= MAX_VISIT_IDENTITIES; i++) expect((await identify(session, `person.${i}@example.com`)).status).toBe(202)
    expect(await sql('select email, cardinality(email_hashes) as n from visits where session_id = ?', [session]))
      .toEqual([{ email: `person.${MAX_VISIT_IDENTITIES - 1}@example.com`, n: MAX_VISIT_IDENTITIES }])
  })
})
