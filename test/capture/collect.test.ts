import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeTestPlatform, testPlatform } from '../delivery/test-platform.ts'
import type { FakeServer } from '../fakes/server.ts'
import { builtInPlugins } from '../../plugins/index.ts'

// The capture routes as the tracking script (and a server-side worker) use them, on a site delivering to a
// test platform. Visitor addresses come from X-Forwarded-For (trustProxy on), from the bundled geo data:
// 73.162.0.1 (Comcast) is in the US, 81.2.69.142 in the United Kingdom.
const US_IP = '73.162.0.1'
const UK_IP = '81.2.69.142'
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const WORKER_SECRET = 'worker-secret-0123456789abcdef'
let app: TestApp
let fake: FakeServer
let copKey: string
let openCopKey: string

beforeAll(async () => {
  fake = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['intake', 'capture', 'export'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    // A pixel conversion with a page-chosen id is sent without the grace a signed copy could supersede it in.
    delivery: { workerIntervalMs: 25, publicGraceSeconds: 0 },
    sites: [
      {
        id: 'shop', name: 'Shop', domains: ['shop.example'],
        destinations: { testads: { baseUrl: fake.url, token: 'good' } },
        events: [{ key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule' }],
        capture: { workerSecret: WORKER_SECRET, forms: [{ selector: '#signup', emailField: 'email' }] },
      },
      { id: 'open', name: 'No domains, no banner', consent: { banner: 'off' } },
    ],
  }, { adapters: [testPlatform], builtInPlugins })
  copKey = app.dcgate.context.sites.byId('shop')!.copKey
  openCopKey = app.dcgate.context.sites.byId('open')!.copKey
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
let n = 0
const sid = () => `sess${String(++n).padStart(8, '0')}x`
const pageview = (url = 'https://shop.example/', extra: Record<string, unknown> = {}) => ({ t: 'pageview', ts: Date.now(), url, ...extra })

function collect(body: unknown, options: { ip?: string, origin?: string, key?: string, path?: string, headers?: Record<string, string> } = {}) {
  return app.request(`${options.path ?? '/collect'}?cop_key=${options.key ?? copKey}`, {
    method: 'POST',
    headers: {
      'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': options.ip ?? US_IP,
      ...(options.origin ? { origin: options.origin } : {}), ...options.headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

async function visit(sessionId: string): Promise<Record<string, any> | undefined> {
  for (let i = 0; i < 100; i++) {
    const [row] = await sql<Record<string, any>[]>('select * from visits where session_id = ?', [sessionId])
    if (row && row.page_count + row.event_count > 0) return row
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return undefined
}

describe('GET /script', () => {
  it('serves the script as JavaScript, cached with an ETag, compressed, and 304 on revalidation', async () => {
    const response = await app.request(`/script?cop_key=${copKey}`, { headers: { 'accept-encoding': 'gzip' } })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8')
    expect(response.headers.get('cache-control')).toMatch(/max-age=\d+/)
    expect(response.headers.get('content-encoding')).toBe('gzip')
    const code = gunzipSync(Buffer.from(await response.arrayBuffer())).toString('utf8')
    // The mapped forms come with the forms chunk, asked for with the same cop_key.
    expect(code).not.toContain('#signup')
    expect(await (await app.request(`/script/forms?cop_key=${copKey}`)).text()).toContain('#signup')
    const etag = response.headers.get('etag')!
    expect(etag).toMatch(/^"[^"]+"$/)
    const again = await app.request(`/script?cop_key=${copKey}`, { headers: { 'if-none-match': etag } })
    expect(again.status).toBe(304)
  })

  it('answers an unknown cop_key with 404 and a JavaScript comment, not an HTML page', async () => {
    const response = await app.request('/script?cop_key=cop_nope')
    expect(response.status).toBe(404)
    expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8')
    expect(await response.text()).toMatch(/^\/\* dcgate: unknown cop_key/)
  })
})

describe('POST /collect', () => {
  it('takes a sendBeacon text/plain body, answers 202 at once, and the batch writer stores the visit', async () => {
    const session = sid()
    const landed = Date.now() - 5_000
    const response = await collect({
      v: 1, sid: session, vid: 'visitor-0001', consent: 'unknown',
      hits: [pageview('https://shop.example/?gclid=abc', { ref: 'https://www.google.com/', ts: landed }), pageview('https://shop.example/pricing', { ts: landed + 1234 })],
      clickIds: { gclid: 'abc' }, signals: { webdriver: false, interactions: 3, sinceLoadMs: 4000 },
    }, { origin: 'https://shop.example' })
    expect(response.status).toBe(202)
    expect(await response.json()).toEqual({ ok: true, consent: { required: false, banner: 'eu' } })
    expect(response.headers.get('access-control-allow-origin')).toBe('https://shop.example')
    const row = await visit(session)
    expect(row).toMatchObject({
      site_id: 'shop', visitor_id: 'visitor-0001', page_count: 2, country: 'US', ip_address: US_IP, user_agent: CHROME,
      click_ids: { gclid: 'abc' }, landing_url: 'https://shop.example/?gclid=abc', referrer: 'https://www.google.com/',
    })
    const events = await sql<{ kind: string }[]>('select kind from page_events where session_id = ?', [session])
    expect(events.map((e) => e.kind)).toEqual(['pageview', 'pageview'])
    // The browser's times, to the millisecond: on the page events, and as the visit's start, end and duration.
    const ms = (column: string) => `(extract(epoch from ${column}) * 1000)::float8 as ${column}`
    expect(await sql(`select ${ms('occurred_at')} from page_events where session_id = ? order by occurred_at`, [session])).toEqual([{ occurred_at: landed }, { occurred_at: landed + 1234 }])
    expect(await sql(`select ${ms('started_at')}, ${ms('ended_at')}, duration_ms from visits where session_id = ?`, [session])).toEqual([{ started_at: landed, ended_at: landed + 1234, duration_ms: '1234' }])
  })

  it('adds later hits of a visit to the same row: counts add up, the landing page stays, click ids merge', async () => {
    const session = sid()
    await collect({ v: 1, sid: session, vid: 'visitor-0002', hits: [pageview('https://shop.example/a')], clickIds: { gclid: 'g1' } })
    await visit(session)
    await collect({ v: 1, sid: session, vid: 'visitor-0002', hits: [{ t: 'event', ts: Date.now(), url: 'https://shop.example/a', name: 'video_play' }], clickIds: { msclkid: 'm1' } })
    await expect.poll(async () => (await visit(session))?.event_count).toBe(1)
    expect(await visit(session)).toMatchObject({ page_count: 1, event_count: 1, landing_url: 'https://shop.example/a', click_ids: { gclid: 'g1', msclkid: 'm1' } })
  })

  it('a direct visit has no referrer: the next page\'s referrer (the landing page, sent later) is not taken for it', async () => {
    const session = sid()
    await collect({ v: 1, sid: session, vid: 'visitor-0009', hits: [pageview('https://shop.example/direct')] })
    await visit(session)
    await collect({ v: 1, sid: session, vid: 'visitor-0009', hits: [pageview('https://shop.example/next', { ref: 'https://shop.example/direct' })] })
    await expect.poll(async () => (await visit(session))?.page_count).toBe(2)
    expect(await visit(session)).toMatchObject({ landing_url: 'https://shop.example/direct', referrer: null })
  })

  it('keeps nothing that identifies an EU/UK visitor before consent: the hit is counted without a visit', async () => {
    const session = sid()
    const response = await collect({ v: 1, sid: session, vid: 'visitor-0003', hits: [pageview('https://shop.example/uk')], clickIds: { gclid: 'uk' } }, { ip: UK_IP })
    expect(await response.json()).toEqual({ ok: true, consent: { required: true, banner: 'eu' } })
    await expect.poll(async () => (await sql('select 1 from page_events where url = ? and session_id is null', ['https://shop.example/uk'])).length).toBe(1)
    expect(await sql('select 1 from visits where session_id = ?', [session])).toEqual([])
    const granted = sid()
    await collect({ v: 1, sid: granted, vid: 'visitor-0003', consent: 'granted', hits: [pageview('https://shop.example/uk2')] }, { ip: UK_IP })
    expect(await visit(granted)).toMatchObject({ country: 'GB', consent: 'granted' })
  })

  it('refuses what it cannot take, with a reason: unknown key 404, foreign origin 403, bad body 400', async () => {
    expect((await collect({ v: 1, hits: [pageview()] }, { key: 'cop_unknown' })).status).toBe(404)
    const foreign = await collect({ v: 1, hits: [pageview()] }, { origin: 'https://evil.example' })
    expect(foreign.status).toBe(403)
    expect(await foreign.json()).toMatchObject({ message: expect.stringContaining('evil.example') })
    for (const [body, problem] of [
      ['not json', 'valid JSON'], [{ v: 1, hits: [] }, 'hits'], [{ v: 2, hits: [pageview()] }, 'v'],
      [{ v: 1, hits: [{ t: 'click', ts: 1, url: 'x' }] }, 'hits'], [{ v: 1, sid: 'bad id!', hits: [pageview()] }, 'sid'],
    ] as const) {
      const response = await collect(body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect((await response.json() as { message: string }).message).toContain(problem)
    }
  })

  it('keeps the CORS headers on an error answer, so the script can read why', async () => {
    const response = await collect({ v: 1, hits: [] }, { origin: 'https://shop.example' })
    expect(response.status).toBe(400)
    expect(response.headers.get('access-control-allow-origin')).toBe('https://shop.example')
  })

  it('links a page view first counted without identifiers to the visit when it is sent again after consent, and strips click ids before consent', async () => {
    const view = { t: 'pageview', hid: 'hit-landing-0001', ts: Date.now(), url: 'https://shop.example/?gclid=eu-click&utm_source=ads' }
    await collect({ v: 1, hits: [view] }, { ip: UK_IP })
    await expect.poll(async () => (await sql<{ url: string, session_id: string | null }[]>('select url, session_id from page_events where url like ?', ['https://shop.example/?utm_source=ads%'])).length).toBe(1)
    const session = sid()
    await collect({ v: 1, sid: session, vid: 'visitor-0099', consent: 'granted', hits: [view], clickIds: { gclid: 'eu-click' } }, { ip: UK_IP })
    expect(await visit(session)).toMatchObject({ page_count: 1, landing_url: view.url })
    const rows = await sql<{ url: string, session_id: string | null }[]>(`select url, session_id from page_events where url like 'https://shop.example/?%utm_source=ads%'`)
    expect(rows).toEqual([{ url: view.url, session_id: session }])
  })

  it('a withdrawal reaches the visit: consent denied, click ids and network identifiers gone', async () => {
    const session = sid()
    await collect({ v: 1, sid: session, vid: 'visitor-0100', consent: 'granted', hits: [pageview()], clickIds: { gclid: 'gone' } })
    await visit(session)
    await collect({ v: 1, sid: session, consent: 'denied', hits: [{ t: 'event', ts: Date.now(), url: 'https://shop.example/', name: 'dc_consent_withdrawn' }] })
    // Applied with the next batch write, after the visit's own buffered hits.
    await expect.poll(async () => (await sql<Record<string, any>[]>('select consent, click_ids, ip_address, user_agent from visits where session_id = ?', [session]))[0])
      .toEqual({ consent: 'denied', click_ids: {}, ip_address: null, user_agent: null })
  })

  it('accepts any origin on a site with no domains configured, and never asks for consent with banner off', async () => {
    const response = await collect({ v: 1, hits: [pageview('https://anything.example/')] }, { key: openCopKey, origin: 'https://anything.example', ip: UK_IP })
    expect(response.status).toBe(202)
    expect(await response.json()).toEqual({ ok: true, consent: { required: false, banner: 'off' } })
  })

  it('answers a CORS preflight for the site\'s domains only', async () => {
    const ok = await app.request(`/collect?cop_key=${copKey}`, { method: 'OPTIONS', headers: { origin: 'https://www.shop.example', 'access-control-request-method': 'POST' } })
    expect(ok.status).toBe(204)
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://www.shop.example')
    const refused = await app.request(`/collect?cop_key=${copKey}`, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } })
    expect(refused.status).toBe(403)
  })

  it('sends a tracked conversion event into the delivery pipeline with the visit\'s click ids, IP and browser', async () => {
    const session = sid()
    const response = await collect({
      v: 1, sid: session, vid: 'visitor-0004', consent: 'granted', clickIds: { gclid: 'px-gclid' },
      hits: [pageview('https://shop.example/checkout'), { t: 'event', ts: Date.now(), url: 'https://shop.example/thanks', name: 'Purchase', id: 'order-77', props: { value: 19.5, currency: 'eur', order_id: 77 } }],
    })
    expect(response.status).toBe(202)
    const [conversion] = await sql<Record<string, any>[]>('select * from conversions where message_id = ?', ['order-77'])
    expect(conversion).toMatchObject({ source: 'pixel', confirmation: 'tracked', trust: 'public', standard_event: 'Purchase', value: 19.5, currency: 'EUR', order_id: '77', session_id: session })
    // Under the id the page gave (its own pixel's eventID), which the platform deduplicates on.
    await expect.poll(() => fake.requests.filter((r) => r.body.includes('"id":"order-77"')).length, { timeout: 5000 }).toBe(1)
    const sent = JSON.parse(fake.requests.find((r) => r.body.includes('"id":"order-77"'))!.body) as { events: { clickIds: Record<string, string>, ip: string }[] }
    expect(sent.events[0]).toMatchObject({ clickIds: { gclid: 'px-gclid' }, ip: US_IP })
  })

  it('a tracked Purchase without an id reaches the platforms under its order id, which the site\'s own tag sends too', async () => {
    const response = await collect({
      v: 1, sid: sid(), vid: 'visitor-0005', consent: 'granted',
      hits: [{ t: 'event', ts: Date.now(), url: 'https://shop.example/thanks', name: 'Purchase', props: { value: 12, currency: 'EUR', order_id: 'A-1077' } }],
    })
    expect(response.status).toBe(202)
    expect(await sql('select message_id, order_id, trust from conversions where order_id = ?', ['A-1077'])).toEqual([{ message_id: 'A-1077', order_id: 'A-1077', trust: 'public' }])
    await expect.poll(() => fake.requests.filter((r) => r.body.includes('"id":"A-1077"')).length, { timeout: 5000 }).toBe(1)
  })
})

describe('POST /collect/worker', () => {
  it('believes the body\'s IP and user agent only with the site\'s worker secret', async () => {
    const trusted = sid()
    const body = (session: string) => ({ v: 1, sid: session, vid: 'visitor-0005', hits: [pageview()], ip: UK_IP, userAgent: 'Mozilla/5.0 (iPhone) Safari', consent: 'granted' })
    expect((await collect(body(trusted), { path: '/collect/worker', ip: US_IP, headers: { 'x-dc-worker-secret': WORKER_SECRET } })).status).toBe(202)
    expect(await visit(trusted)).toMatchObject({ ip_address: UK_IP, country: 'GB' })
    const untrusted = sid()
    expect((await collect(body(untrusted), { path: '/collect/worker', ip: US_IP })).status).toBe(202)
    expect(await visit(untrusted)).toMatchObject({ ip_address: US_IP, country: 'US' })
    expect((await collect(body(sid()), { path: '/collect/worker', headers: { 'x-dc-worker-secret': 'wrong' } })).status).toBe(401)
  })
})


describe('POST /identify', () => {
  it('records the identified user, puts the email on the visit, and the health check counts it', async () => {
    const session = sid()
    await collect({ v: 1, sid: session, vid: 'visitor-0006', hits: [pageview()], clickIds: { gclid: 'id-gclid' } })
    const identify = (email: string, ip = US_IP, consent = 'unknown') => app.request(`/identify?cop_key=${copKey}`, {
      method: 'POST', headers: { 'content-type': 'text/plain', 'x-forwarded-for': ip },
      body: JSON.stringify({ v: 1, sid: session, vid: 'visitor-0006', email, via: 'sdk', consent }),
    })
    expect((await identify(' Ann.Lee@Example.com ')).status).toBe(202)
    const [user] = await sql<Record<string, any>[]>('select * from identified_users where site_id = ?', ['shop'])
    expect(user).toMatchObject({ email: 'ann.lee@example.com', source: 'client_sdk', session_id: session, ip_country: 'US', email_hash: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect(await visit(session)).toMatchObject({ email: 'ann.lee@example.com', email_hash: user!.email_hash })
    expect((await identify('ann.lee@example.com')).status).toBe(202)
    expect(await sql('select 1 from identified_users where site_id = ?', ['shop'])).toHaveLength(1)

    const key = await app.createKey('shop')
    await new Promise((resolve) => setTimeout(resolve, 5100))
    const health = await (await app.request('/api/v1/export/health', { headers: { 'x-dc-key': key } })).json()
    expect(health).toEqual({ success: true, app_id: 'shop', identified_user_count: 1 })

    // The done-when path, server side: a conversion posted later for this email recovers the visit's gclid.
    const conversion = await app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
      body: JSON.stringify({ event: 'Lead', messageId: 'lead-after-identify', context: { traits: { email: 'ANN.LEE@example.com' } } }),
    })
    expect((await conversion.json() as { events: { identity: unknown }[] }).events[0]!.identity).toEqual({ matched: 1, created: 0, enriched: ['gclid'] })
    const sent = JSON.parse(fake.requests.find((r) => r.body.includes('"id":"lead-after-identify"'))!.body) as { events: { clickIds: Record<string, string> }[] }
    expect(sent.events[0]!.clickIds).toEqual({ gclid: 'id-gclid' })

    const refused = await identify('eu@example.com', UK_IP)
    expect(refused.status).toBe(403)
    expect(await refused.json()).toMatchObject({ code: 'CONSENT_REQUIRED' })
    expect((await identify('not-an-email')).status).toBe(400)

    // From the site's page, the answer carries the CORS headers, refusals included.
    const fromPage = (email: string, ip: string) => app.request(`/identify?cop_key=${copKey}`, {
      method: 'POST', headers: { 'content-type': 'text/plain', 'x-forwarded-for': ip, 'origin': 'https://shop.example' },
      body: JSON.stringify({ v: 1, sid: session, vid: 'visitor-0006', email, via: 'sdk', consent: 'unknown' }),
    })
    const answers = [await fromPage('ann.lee@example.com', US_IP), await fromPage('eu@example.com', UK_IP)]
    expect(answers.map((a) => [a.status, a.headers.get('access-control-allow-origin'), a.headers.get('vary')])).toEqual([
      [202, 'https://shop.example', 'Origin'],
      [403, 'https://shop.example', 'Origin'],
    ])
  }, 15_000)
})

describe('POST /identify/worker', () => {
  it('judges consent and records the country by the visitor\'s address, believed only with the worker secret', async () => {
    const identify = (email: string, consent: string, headers: Record<string, string>) => app.request(`/identify/worker?cop_key=${copKey}`, {
      method: 'POST',
      // The worker's own address is in the US; the visitor it forwards is in the UK.
      headers: { 'content-type': 'application/json', 'x-forwarded-for': US_IP, ...headers },
      body: JSON.stringify({ v: 1, sid: sid(), vid: 'visitor-0007', email, via: 'sdk', consent, ip: UK_IP, userAgent: 'Mozilla/5.0 (iPhone) Safari' }),
    })
    const secret = { 'x-dc-worker-secret': WORKER_SECRET }
    const refused = await identify('worker-unknown@example.com', 'unknown', secret)
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([403, 'CONSENT_REQUIRED'])
    expect((await identify('worker-granted@example.com', 'granted', secret)).status).toBe(202)
    const stored = async (email: string) => (await sql<{ ip_country: string }[]>('select ip_country from identified_users where email = ?', [email]))[0]?.ip_country
    expect(await stored('worker-granted@example.com')).toBe('GB')
    // Without the secret the worker's own address counts (US: no consent needed), and a wrong secret is refused.
    expect((await identify('worker-plain@example.com', 'unknown', {})).status).toBe(202)
    expect(await stored('worker-plain@example.com')).toBe('US')
    expect((await identify('worker-wrong@example.com', 'granted', { 'x-dc-worker-secret': 'wrong' })).status).toBe(401)
  })
})
