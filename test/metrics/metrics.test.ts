import { networkInterfaces } from 'node:os'
import { serve } from 'h3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, postPurchase, type TestApp } from '../helpers/app.ts'
import type { FakeServer } from '../fakes/server.ts'
import { startFakeTestPlatform, testPlatform } from '../delivery/test-platform.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { sample, scrape as scrapeMetrics } from './scrape.ts'

// GET /metrics after real traffic: a conversion delivered to a platform stand-in, a duplicate, a 404. Metrics are
// per process (prom-client's way), so the test reads the change around its own requests.
let app: TestApp
let fake: FakeServer
let key: string

beforeAll(async () => {
  fake = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['capture', 'intake', 'export'],
    sites: [{ id: 'demo', name: 'Demo', destinations: { testads: { baseUrl: fake.url, token: 'good' } } }],
  }, { adapters: [testPlatform], builtInPlugins })
  key = await app.createKey()
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

const conversion = (messageId: string) => postPurchase(app, key, messageId)

const scrape = () => scrapeMetrics(app)

describe('GET /metrics', () => {
  it('counts a conversion, its delivery and its duplicate, and requests by route pattern', async () => {
    const before = await scrape()
    expect((await conversion('metrics-1')).status).toBe(202)
    expect((await conversion('metrics-1')).status).toBe(202) // the same messageId again: a duplicate
    expect((await app.request('/api/v1/no-such-route/abc')).status).toBe(404)
    const after = await scrape()
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels)

    expect(delta('dcgate_conversions_total', { source: 'automation', outcome: 'accepted' })).toBe(1)
    expect(delta('dcgate_conversions_total', { source: 'automation', outcome: 'duplicate' })).toBe(1)
    expect(delta('dcgate_deliveries_total', { platform: 'testads', kind: 'conversion', outcome: 'sent' })).toBe(1)
    expect(delta('dcgate_delivery_duration_seconds_count', { platform: 'testads', kind: 'conversion' })).toBe(1)
    // A delivery to a loopback stand-in takes more than nothing and far less than the 10 s timeout.
    const seconds = delta('dcgate_delivery_duration_seconds_sum', { platform: 'testads', kind: 'conversion' })
    expect(seconds).toBeGreaterThan(0)
    expect(seconds).toBeLessThan(10)

    const route = { method: 'POST', route: '/api/v1/conversions/automation', status: '202' }
    expect(delta('dcgate_http_requests_total', route)).toBe(2)
    expect(delta('dcgate_http_request_duration_seconds_count', route)).toBe(2)
    expect(delta('dcgate_http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' })).toBe(1)
    // Route patterns only: the path of a request never becomes a label.
    expect(after).not.toContain('no-such-route')
    expect(after).not.toContain(key)
  })

  it('serves the gauges read at scrape, default Node metrics, and HELP for each', async () => {
    const text = await scrape()
    for (const name of ['dcgate_outbox_pending', 'dcgate_capture_queued_hits', 'dcgate_capture_journal_bytes', 'dcgate_db_pool_connections', 'dcgate_nodejs_eventloop_lag_seconds', 'dcgate_build_info']) {
      expect(text).toContain(`# HELP ${name} `)
    }
    expect(sample(text, 'dcgate_db_pool_connections', { state: 'free' }) + sample(text, 'dcgate_db_pool_connections', { state: 'used' })).toBeGreaterThan(0)
    expect(sample(text, 'dcgate_outbox_scrape_errors_total')).toBe(0)
  })

  it('counts what waits in the outbox, with the age of the oldest', async () => {
    // The delivery made above, put back to wait for a retry as if first tried 90 s ago.
    await app.dcgate.context.prepared({ name: 'test_backdate', text: `update deliveries set status = 'retrying', created_at = now() - interval '90 seconds' where provider = 'testads'` }, [])
    const text = await scrape()
    expect(sample(text, 'dcgate_outbox_pending', { platform: 'testads' })).toBeGreaterThanOrEqual(1)
    expect(sample(text, 'dcgate_outbox_oldest_pending_age_seconds', { platform: 'testads' })).toBeGreaterThanOrEqual(90)
  })
})

// The machine's own address on a real interface: connecting to it gives a peer that is not loopback.
const outside = Object.values(networkInterfaces()).flat().find((info) => info && !info.internal && info.family === 'IPv4')?.address

describe('GET /metrics over a real socket', () => {
  let server: ReturnType<typeof serve>
  let port: number
  beforeAll(async () => {
    server = serve(app.dcgate.app, { port: 0, hostname: '0.0.0.0', silent: true, gracefulShutdown: false })
    await server.ready()
    port = (server.node!.server!.address() as { port: number }).port
  })
  afterAll(async () => {
    await server?.close(true)
  })
  const metricsFrom = (host: string, headers: Record<string, string> = {}) => fetch(`http://${host}:${port}/metrics`, { headers })

  it('answers loopback without a token', async () => {
    expect((await metricsFrom('127.0.0.1')).status).toBe(200)
  })

  it('wants the admin token through a proxy on this host', async () => {
    const relayed = await metricsFrom('127.0.0.1', { 'x-forwarded-for': '203.0.113.9' })
    expect(relayed.status).toBe(401)
    expect(await relayed.json()).toEqual({ message: 'Metrics answer on loopback, or with the admin token' })
    expect((await metricsFrom('127.0.0.1', { 'x-forwarded-for': '203.0.113.9', 'authorization': `Bearer ${app.dcgate.adminToken}` })).status).toBe(200)
  })

  it.skipIf(!outside)('refuses another address without the token, even one claiming loopback, and answers it with the token', async () => {
    expect((await metricsFrom(outside!)).status).toBe(401)
    expect((await metricsFrom(outside!, { 'x-forwarded-for': '127.0.0.1' })).status).toBe(401)
    expect((await metricsFrom(outside!, { authorization: 'Bearer wrong' })).status).toBe(401)
    const allowed = await metricsFrom(outside!, { authorization: `Bearer ${app.dcgate.adminToken}` })
    expect(allowed.status).toBe(200)
    expect(await allowed.text()).toContain('dcgate_http_requests_total')
  })
})
