import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { getPage, insertConversions, insertIdentifiedUsers, insertVisits, pageAll, sqlOf, uuidOf, type Sql } from './support.ts'

// The seven export endpoints as an integrator sees them: the spec's shapes and types, key auth, site isolation,
// the 400s that name the parameter, and the page size cap.
let app: TestApp
let sql: Sql
let key: string
let otherKey: string

beforeAll(async () => {
  app = await bootTestApp({
    plugins: ['export'],
    sites: [
      {
        id: 'demo', name: 'Demo shop',
        events: [
          { key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule' },
          { key: 'newsletter', name: 'Newsletter' },
          { key: 'old_thing', name: 'Retired', sendsAs: 'Lead', active: false },
        ],
      },
      { id: 'other', name: 'Other shop' },
    ],
  }, { builtInPlugins })
  sql = sqlOf(app)
  key = await app.createKey('demo')
  otherKey = await app.createKey('other')
  await insertVisits(sql, [
    { id: uuidOf(1n), siteId: 'demo', startedAt: '2026-03-01T10:00:00.123456Z' },
    { id: uuidOf(2n), siteId: 'demo', startedAt: '2026-03-01T10:00:01Z', isBot: true },
    { id: uuidOf(3n), siteId: 'demo', startedAt: '2026-03-01T10:00:02Z', isVpn: true },
    { id: uuidOf(4n), siteId: 'demo', startedAt: '2026-03-01T10:00:03Z', isTor: true, isBot: true },
    { id: uuidOf(5n), siteId: 'other', startedAt: '2026-03-01T10:00:00Z', isBot: true, isProxy: true },
  ])
  await insertIdentifiedUsers(sql, [
    { id: uuidOf(11n), siteId: 'demo', identifiedAt: '2026-03-02T00:00:00Z' },
    { id: uuidOf(12n), siteId: 'other', identifiedAt: '2026-03-02T00:00:00Z' },
  ])
  await insertConversions(sql, [
    // Two platforms, both sent: one row, from the delivery sent first (meta, sent_at …:00).
    { id: uuidOf(21n), siteId: 'demo', createdAt: '2026-03-03T00:00:00Z', orderId: 'A-1', deliveries: [['meta', 'sent'], ['google_ads', 'sent']] },
    // The same order again, later (e.g. the pixel after the webhook): folded into A-1's row.
    { id: uuidOf(22n), siteId: 'demo', createdAt: '2026-03-03T00:00:05Z', orderId: 'A-1', deliveries: [['meta', 'sent']] },
    // Delivered nowhere: not listed.
    { id: uuidOf(23n), siteId: 'demo', createdAt: '2026-03-03T00:00:06Z', orderId: 'A-2', deliveries: [['meta', 'failed'], ['google_ads', 'skipped']] },
    // One platform failed, one sent: listed, from the sent one.
    { id: uuidOf(24n), siteId: 'demo', createdAt: '2026-03-03T00:00:07Z', orderId: null, deliveries: [['meta', 'failed'], ['tiktok', 'sent']] },
    // Gates: a bot's or a denied consent's conversion is never listed.
    { id: uuidOf(25n), siteId: 'demo', createdAt: '2026-03-03T00:00:08Z', orderId: 'A-3', deliveries: [['meta', 'sent']], isBot: true },
    { id: uuidOf(26n), siteId: 'demo', createdAt: '2026-03-03T00:00:09Z', orderId: 'A-4', deliveries: [['meta', 'sent']], consent: 'denied' },
    { id: uuidOf(27n), siteId: 'other', createdAt: '2026-03-03T00:00:00Z', orderId: 'A-1', deliveries: [['meta', 'sent']] },
  ])
})
afterAll(async () => {
  await app?.close()
})

const list = (path: string, params: Record<string, string | undefined> = {}, apiKey = key) => getPage(app, apiKey, `/api/v1/export/${path}`, params)

describe('the lists answer the spec\'s shapes', () => {
  it('sessions: one record per visit with every field of the spec, typed', async () => {
    const { status, body } = await list('sessions')
    expect(status).toBe(200)
    expect(body.success).toBe(true)
    expect(body.pagination).toEqual({ count: 4, has_more: false, next_since: null })
    expect(body.data[0]).toEqual({
      session_id: `sess-${uuidOf(1n)}`, start_time: '2026-03-01T10:00:00.123456Z', end_time: '2026-03-01T10:01:30.123456Z', duration_ms: 90000,
      page_count: 3, country: 'DE', city: 'Berlin', ip_address: '203.0.113.9', is_vpn: false, is_proxy: false, is_tor: false,
      user_agent: 'Mozilla/5.0 (test)', platform: 'desktop', is_bot: false, bot_reasons: [], referrer: 'https://ref.example/', landing_url: 'https://shop.example.com/',
      consent_purposes: null,
    })
    expect(body.data.map((r) => r.session_id)).toEqual([1n, 2n, 3n, 4n].map((n) => `sess-${uuidOf(n)}`))
  })

  it('bot-detections: only visits ruled bots', async () => {
    const { body } = await list('bot-detections')
    expect(body.data).toEqual([
      { session_id: `sess-${uuidOf(2n)}`, bot_reasons: ['ua_bot'], user_agent: 'Mozilla/5.0 (test)', country: 'DE', ip_address: '203.0.113.9', is_vpn: false, is_proxy: false, detected_at: '2026-03-01T10:00:01.000000Z' },
      { session_id: `sess-${uuidOf(4n)}`, bot_reasons: ['ua_bot'], user_agent: 'Mozilla/5.0 (test)', country: 'DE', ip_address: '203.0.113.9', is_vpn: false, is_proxy: false, detected_at: '2026-03-01T10:00:03.000000Z' },
    ])
  })

  it('vpn-proxy-detections: only visits behind a VPN, proxy or Tor', async () => {
    const { body } = await list('vpn-proxy-detections')
    expect(body.data).toEqual([
      { session_id: `sess-${uuidOf(3n)}`, ip_address: '203.0.113.9', is_vpn: true, is_proxy: false, is_tor: false, isp: 'Example ISP', organization: 'Example Org', country: 'DE', detected_at: '2026-03-01T10:00:02.000000Z' },
      { session_id: `sess-${uuidOf(4n)}`, ip_address: '203.0.113.9', is_vpn: false, is_proxy: false, is_tor: true, isp: 'Example ISP', organization: 'Example Org', country: 'DE', detected_at: '2026-03-01T10:00:03.000000Z' },
    ])
  })

  it('identified-users: the person\'s email and risk fields, null until scored', async () => {
    const { body } = await list('identified-users')
    expect(body.data).toEqual([{
      id: uuidOf(11n), email: `u-${uuidOf(11n)}@example.com`, source: 'client_sdk', email_risk_score: null, email_risk_label: null,
      is_disposable: null, ip_country: 'FR', ip_is_vpn: false, identified_at: '2026-03-02T00:00:00.000000Z',
    }])
  })

  it('conversions: delivered ones only, one row per order id, from the first delivery sent', async () => {
    const { body } = await list('conversions')
    const deliveries = await sql<{ id: string, conversion_id: string, provider: string }[]>('select id, conversion_id, provider from deliveries where status = \'sent\'')
    const deliveryOf = (conversion: bigint, provider: string) => deliveries.find((d) => d.conversion_id === uuidOf(conversion) && d.provider === provider)!.id
    const common = {
      validated: true, event_name: 'Purchase', value: 42.5, currency: 'EUR', country: 'DE', has_consent: true, refunded: false, refunded_at: null, refunded_value: null,
      confirmation: 'tracked', http_status: 200, source_event_type: 'automation', session_id: 'sess-1', user_id: 'user-1', content_name: 'Blue shirt', content_category: 'Shirts',
    }
    expect(body.data).toEqual([
      { id: uuidOf(21n), ...common, provider: 'meta', order_id: 'A-1', created_at: '2026-03-03T00:00:00.000000Z', delivery_id: deliveryOf(21n, 'meta'), events_received: 2 },
      { id: uuidOf(24n), ...common, provider: 'tiktok', order_id: null, created_at: '2026-03-03T00:00:07.000000Z', delivery_id: deliveryOf(24n, 'tiktok'), events_received: 1 },
    ])
  })

  it('events: the four standard events, then the site\'s active custom events, without pagination', async () => {
    const response = await app.request('/api/v1/export/events', { headers: { 'x-dc-key': key } })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      success: true,
      data: [
        { key: 'Purchase', name: 'Purchase', source: 'standard', sends_as: 'Purchase' },
        { key: 'Lead', name: 'Lead', source: 'standard', sends_as: 'Lead' },
        { key: 'CompleteRegistration', name: 'Complete registration', source: 'standard', sends_as: 'CompleteRegistration' },
        { key: 'Schedule', name: 'Schedule', source: 'standard', sends_as: 'Schedule' },
        { key: 'demo_booked', name: 'Demo booked', source: 'site', sends_as: 'Schedule' },
        { key: 'newsletter', name: 'Newsletter', source: 'site', sends_as: null },
      ],
    })
  })

  it('health: the key\'s site and its real identified-user count', async () => {
    const response = await app.request('/api/v1/export/health', { headers: { 'x-dc-key': otherKey } })
    expect(await response.json()).toEqual({ success: true, app_id: 'other', identified_user_count: 1 })
  })
})

describe('keys and sites', () => {
  it.each(['conversions', 'identified-users', 'events', 'sessions', 'bot-detections', 'vpn-proxy-detections'])('%s: 401 without a key or with a wrong one', async (path) => {
    const missing = await app.request(`/api/v1/export/${path}`)
    expect(missing.status).toBe(401)
    expect(await missing.json()).toEqual({ message: 'Missing x-dc-key header' })
    const wrong = await app.request(`/api/v1/export/${path}`, { headers: { 'x-dc-key': `dcp_${'x'.repeat(40)}` } })
    expect(wrong.status).toBe(401)
  })

  it('another site\'s key sees only its own records', async () => {
    expect((await list('sessions', {}, otherKey)).body.data.map((r) => r.session_id)).toEqual([`sess-${uuidOf(5n)}`])
    expect((await list('bot-detections', {}, otherKey)).body.data).toHaveLength(1)
    expect((await list('vpn-proxy-detections', {}, otherKey)).body.data).toHaveLength(1)
    expect((await list('identified-users', {}, otherKey)).body.data.map((r) => r.id)).toEqual([uuidOf(12n)])
    expect((await list('conversions', {}, otherKey)).body.data.map((r) => r.id)).toEqual([uuidOf(27n)])
  })
})

describe('parameters', () => {
  it.each([
    ['since', 'yesterday'], ['since', '2026-02-30'], ['since', '2026-03-01T25:00:00Z'], ['until', '2026-03-01T10:00:00+25:00'], ['until', ''],
    ['limit', '0'], ['limit', '-1'], ['limit', 'ten'], ['limit', '1.5'],
  ])('%s=%s: 400 naming the parameter', async (name, value) => {
    const { status, body } = await list('sessions', { [name]: value })
    expect(status).toBe(400)
    expect((body as unknown as { message: string }).message).toMatch(new RegExp(`\\b${name}: must be`))
  })

  it('since and until take dates, offsets and any number of fraction digits', async () => {
    const ids = async (params: Record<string, string>) => (await list('sessions', params)).body.data.map((r) => r.session_id)
    expect(await ids({ since: '2026-03-01T10:00:00.123456Z', until: '2026-03-01T10:00:01Z' })).toEqual([`sess-${uuidOf(1n)}`])
    expect(await ids({ since: '2026-03-01T10:00:00.1234561Z' })).toHaveLength(3)
    expect(await ids({ since: '2026-03-01T12:00:00.124+02:00', until: '2026-03-01T12:00:02+0200' })).toEqual([2n].map((n) => `sess-${uuidOf(n)}`))
    expect(await ids({ since: '2026-03-01T10:00:01', until: '2026-03-01T10:00:02.0Z' })).toEqual([`sess-${uuidOf(2n)}`])
    expect(await ids({ since: '2026-03-01', until: '2026-03-02' })).toHaveLength(4)
    expect(await ids({ since: '2026-03-02' })).toEqual([])
    expect(await ids({ since: '2026-03-01T10:00:03Z', until: '2026-03-01T10:00:01Z' })).toEqual([])
  })

  it('limit is capped at 500, and the default is 100', async () => {
    await insertVisits(sql, Array.from({ length: 620 }, (_, i) => ({ id: uuidOf(1000n + BigInt(i)), siteId: 'other', startedAt: '2026-04-01T00:00:00Z' })))
    const capped = await list('sessions', { limit: '100000000000000000000000' }, otherKey)
    expect(capped.status).toBe(200)
    expect(capped.body.pagination).toMatchObject({ count: 500, has_more: true })
    expect((await list('sessions', {}, otherKey)).body.pagination).toMatchObject({ count: 100, has_more: true })
    const all = await pageAll(app, otherKey, '/api/v1/export/sessions', { limit: 1000 })
    expect(all.pages).toBe(2)
    expect(new Set(all.records.map((r) => r.session_id)).size).toBe(621)
  })

  it('the cut-off of each page is in the x-export-until header: the given until, or the horizon', async () => {
    expect((await list('sessions', { until: '2026-03-01T12:00:00+02:00' })).until).toBe('2026-03-01T10:00:00.000000Z')
    const horizon = (await list('sessions')).until!
    expect(Date.now() - Date.parse(horizon)).toBeGreaterThanOrEqual(1000)
    expect(Date.now() - Date.parse(horizon)).toBeLessThan(60_000)
  })
})
