import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeHubspot, type FakeHubspot } from '../fakes/hubspot.ts'
import { startFakeTestPlatform, testPlatform } from '../delivery/test-platform.ts'
import type { FakeServer } from '../fakes/server.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import hubspot from '../../adapters/crm/hubspot/index.ts'

// The done-when for pollers: a contact the HubSpot fake marks sales-qualified makes the scheduler release
// that lead's held conversion within one poll, and only that one.
let app: TestApp
let crm: FakeHubspot
let platform: FakeServer
let key: string

beforeAll(async () => {
  crm = await startFakeHubspot()
  platform = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['intake', 'release'],
    delivery: { workerIntervalMs: 25 },
    release: { pollIntervalSeconds: 10 },
    sites: [{
      id: 'shop', name: 'Shop', destinations: { testads: { baseUrl: platform.url, token: 'good' } },
      events: [{ key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule', release: 'when_qualified' }],
      crm: { hubspot: { accessToken: crm.accessToken, eventName: 'demo_booked', baseUrl: crm.url } },
    }],
  }, { adapters: [testPlatform, hubspot], builtInPlugins })
  key = await app.createKey('shop')
})
afterAll(async () => {
  await app?.close()
  await crm?.close()
  await platform?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const hold = (messageId: string, email: string) => app.request('/api/v1/conversions/automation', {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
  body: JSON.stringify({ event: 'demo_booked', messageId, context: { traits: { email }, identifiers: { gclid: `g-${messageId}` } } }),
})
const stateOf = async (messageId: string) => (await sql<{ state: string }[]>('select state from conversions where message_id = ?', [messageId]))[0]?.state

describe('the HubSpot poller through the scheduler', () => {
  it('releases the held lead whose contact turned sales-qualified, within one poll', async () => {
    await hold('hs-1', 'qualified.lead@example.com')
    await hold('hs-2', 'still.a.lead@example.com')
    const contact = crm.addContact({ email: 'Qualified.Lead@Example.com', lifecyclestage: 'lead', at: new Date(Date.now() - 60_000) })
    crm.addContact({ email: 'still.a.lead@example.com', lifecyclestage: 'lead', at: new Date(Date.now() - 60_000) })
    crm.update(contact, { lifecyclestage: 'salesqualifiedlead' }, new Date())
    const pollsBefore = crm.searches.length
    await sql(`update crm_poll_state set next_run_at = now()`)
    await expect.poll(() => stateOf('hs-1'), { timeout: 10_000, interval: 200 }).toBe('released')
    expect(crm.searches.length - pollsBefore).toBeGreaterThanOrEqual(1)
    expect(await stateOf('hs-2')).toBe('held')
    await expect.poll(() => platform.requests.filter((r) => r.body.includes('"id":"hs-1"')).length).toBe(1)
    expect(JSON.parse(platform.requests.find((r) => r.body.includes('"id":"hs-1"'))!.body).events[0].clickIds).toEqual({ gclid: 'g-hs-1' })
  })
})
