import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeHubspot, type FakeHubspot } from '../fakes/hubspot.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import hubspot from '../../adapters/crm/hubspot/index.ts'
import { sample, scrape as scrapeMetrics } from './scrape.ts'

// dcgate_crm_polls_total counts the qualification gate's polls by CRM and outcome: one with the right token
// succeeds, one with a token the HubSpot fake refuses fails.
let app: TestApp
let crm: FakeHubspot

beforeAll(async () => {
  crm = await startFakeHubspot()
  app = await bootTestApp({
    plugins: ['intake', 'release'],
    release: { pollIntervalSeconds: 10 },
    sites: [
      { id: 'good', name: 'Good', events: [{ key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule', release: 'when_qualified' }], crm: { hubspot: { accessToken: crm.accessToken, eventName: 'demo_booked', baseUrl: crm.url } } },
      { id: 'bad', name: 'Bad', events: [{ key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule', release: 'when_qualified' }], crm: { hubspot: { accessToken: 'pat-na1-00000000-0000-0000-0000-000000000000', eventName: 'demo_booked', baseUrl: crm.url } } },
    ],
  }, { adapters: [hubspot], builtInPlugins })
})
afterAll(async () => {
  await app?.close()
  await crm?.close()
})

const polls = (text: string, outcome: string) => sample(text, 'dcgate_crm_polls_total', { crm: 'hubspot', outcome })
const scrape = () => scrapeMetrics(app)

describe('CRM poll metrics', () => {
  it('counts polls that worked and polls the CRM refused', async () => {
    const before = await scrape()
    await app.dcgate.context.orm.em.getConnection().execute(`update crm_poll_state set next_run_at = now()`)
    await expect.poll(async () => polls(await scrape(), 'ok') - polls(before, 'ok'), { timeout: 20_000, interval: 200 }).toBeGreaterThanOrEqual(1)
    await expect.poll(async () => polls(await scrape(), 'failed') - polls(before, 'failed'), { timeout: 20_000, interval: 200 }).toBeGreaterThanOrEqual(1)
  })
})
