import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { hashIdentity } from '../../core/identity/hash.ts'
import type { FakeServer } from '../fakes/server.ts'
import { startFakeTestPlatform, testPlatform } from '../delivery/test-platform.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { definePlugin } from '../../core/plugin.ts'

let app: TestApp
let heldApp: TestApp
let heldKey: string
const hookCalls: string[] = []
let fake: FakeServer
let key: string
let pausedKey: string

beforeAll(async () => {
  fake = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['intake', 'export'],
    delivery: { retryBaseMs: 40, retryMaxMs: 200, workerIntervalMs: 25, maxAttempts: 3 },
    sites: [
      {
        id: 'demo', name: 'Demo',
        events: [{ key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule' }, { key: 'newsletter', name: 'Newsletter' }],
        destinations: { testads: { baseUrl: fake.url, token: 'good' } },
      },
      { id: 'broken', name: 'Broken token', destinations: { testads: { baseUrl: fake.url, token: 'bad' } } },
      { id: 'paused', name: 'Paused', status: 'paused', destinations: { testads: { baseUrl: fake.url, token: 'good' } } },
    ],
  }, { adapters: [testPlatform], builtInPlugins })
  key = await app.createKey('demo')
  pausedKey = await app.createKey('paused')
  // A site whose demo_booked event waits for qualification, with a listener counting hook calls.
  const counter = definePlugin({ name: 'counter', setup: ({ hooks }) => void hooks.hook('conversion:before-deliver', (decision) => void hookCalls.push(decision.messageId)) })
  heldApp = await bootTestApp({
    plugins: ['intake', 'release', counter],
    sites: [{ id: 'demo', name: 'Demo', events: [{ key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule', release: 'when_qualified' }], destinations: { testads: { baseUrl: fake.url, token: 'good' } } }],
  }, { adapters: [testPlatform], builtInPlugins })
  heldKey = await heldApp.createKey('demo')
})
afterAll(async () => {
  await heldApp?.close()
  await app?.close()
  await fake?.close()
})

const post = (body: unknown, apiKey = key) => app.request('/api/v1/conversions/automation', {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': apiKey }, body: typeof body === 'string' ? body : JSON.stringify(body),
})
const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const sentFor = (messageId: string) => fake.requests.filter((r) => r.body.includes(`"id":"${messageId}"`))
interface Body { accepted: boolean, source: string, adapter_version: string, duration_ms: number, events: { messageId: string, success: boolean, message: string, identity: { matched: number, created: number, enriched: string[] }, errors?: { provider: string, status: string, message: string }[] }[] }

describe('POST /api/v1/conversions/automation', () => {
  it('delivers a conversion and answers 202 with the spec shape', async () => {
    const response = await post({ event: 'Purchase', messageId: 'order-1', properties: { value: 49.9, currency: 'eur', order_id: 1001 }, context: { traits: { email: ' Ann@Example.com ' }, ip: '203.0.113.9' } })
    expect(response.status).toBe(202)
    const body = await response.json() as Body
    expect(body).toMatchObject({ accepted: true, source: 'automation', adapter_version: expect.stringMatching(/^v\d{4}-\d{2}$/), duration_ms: expect.any(Number) })
    expect(body.events).toEqual([{ messageId: 'order-1', success: true, message: 'sent to 1 platform', identity: { matched: 0, created: 0, enriched: [] } }])
    const [sent] = sentFor('order-1')
    const event = (JSON.parse(sent!.body) as { events: Record<string, unknown>[] }).events[0]!
    expect(event).toMatchObject({ name: 'Purchase', value: 49.9, currency: 'EUR', ip: '203.0.113.9', email: expect.stringMatching(/^[0-9a-f]{64}$/) })
    const [delivery] = await sql<{ status: string, attempts: number, http_status: number }[]>(`select d.* from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = 'order-1'`)
    expect(delivery).toMatchObject({ status: 'sent', attempts: 1, http_status: 200 })
  })

  it('stores only hashes of personal data, and drops the IP once delivery has ended', async () => {
    await post({ event: 'Lead', messageId: 'pii-1', context: { traits: { email: 'secret.person@example.com', phone: '+1 (213) 373-4253', first_name: 'Secretname' }, ip: '198.51.100.77', userAgent: 'Mozilla/5.0 secret' } })
    const rows = await sql(`select * from conversions where message_id = 'pii-1'`)
    const stored = JSON.stringify(rows)
    for (const plain of ['secret.person', 'example.com', '373-4253', '2133734253', 'Secretname', 'secretname', '198.51.100.77', 'Mozilla/5.0 secret']) expect(stored).not.toContain(plain)
  })

  it('generates a messageId when none is given', async () => {
    const body = await (await post({ event: 'Lead' })).json() as Body
    expect(body.events[0]!.messageId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('skips a repeated messageId and sends nothing', async () => {
    await post({ event: 'Lead', messageId: 'dup-1' })
    const again = await post({ event: 'Lead', messageId: 'dup-1' })
    expect(again.status).toBe(202)
    expect((await again.json() as Body).events[0]).toMatchObject({ messageId: 'dup-1', success: true, message: 'duplicate_delivery_skipped' })
    expect(sentFor('dup-1')).toHaveLength(1)
  })

  it('delivers once when 50 identical requests arrive at the same time', async () => {
    const bodies = await Promise.all(Array.from({ length: 50 }, () => post({ event: 'Purchase', messageId: 'burst-1', properties: { value: 1, currency: 'USD' } }).then((r) => r.json() as Promise<Body>)))
    const messages = bodies.map((b) => b.events[0]!.message)
    expect(messages.filter((m) => m === 'duplicate_delivery_skipped')).toHaveLength(49)
    expect(sentFor('burst-1')).toHaveLength(1)
    expect(await sql(`select 1 from conversions where message_id = 'burst-1'`)).toHaveLength(1)
  })

  it('reads timestamps as ISO strings, unix seconds or unix milliseconds', async () => {
    // Two days ago on a whole second (unix seconds carry no milliseconds), well inside every platform's window.
    const when = Math.floor((Date.now() - 2 * 86_400_000) / 1000) * 1000
    for (const [id, timestamp] of [['ts-iso', new Date(when).toISOString()], ['ts-s', when / 1000], ['ts-ms', when]] as const) {
      expect((await post({ event: 'Lead', messageId: id, timestamp })).status).toBe(202)
    }
    const rows = await sql<{ occurred_at: Date }[]>(`select occurred_at from conversions where message_id in ('ts-iso', 'ts-s', 'ts-ms')`)
    expect(rows.map((r) => new Date(r.occurred_at).getTime())).toEqual([when, when, when])
  })
})

describe('errors', () => {
  it('401 before anything else', async () => {
    const response = await app.request('/api/v1/conversions/automation', { method: 'POST', body: '[]' })
    expect(response.status).toBe(401)
    expect(await response.json()).toEqual({ message: 'Missing x-dc-key header' })
  })

  it('402 APP_INACTIVE for a paused site, even for a bad body, and nothing is sent', async () => {
    const before = fake.requests.length
    for (const body of [{ event: 'Purchase', messageId: 'paused-1' }, '[]']) {
      const response = await post(body, pausedKey)
      expect(response.status).toBe(402)
      expect(await response.json()).toEqual({ message: 'This site is paused; nothing was sent', code: 'APP_INACTIVE' })
    }
    expect(fake.requests.length).toBe(before)
    expect(await sql(`select 1 from conversions where site_id = 'paused'`)).toHaveLength(0)
  })

  it('422 naming the problem when the body is not an object with a non-empty event', async () => {
    for (const [body, expected] of [
      ['[]', 'must be a JSON object'], ['"text"', 'must be a JSON object'], ['null', 'must be a JSON object'], ['{"event": ', 'valid JSON'],
      [{}, 'event: is required'], [{ event: '' }, 'event: must not be empty'], [{ event: '   ' }, 'event: must not be empty'], [{ event: 42 }, 'event: must be a string'],
      [{ event: 'Lead', timestamp: 'yesterday' }, 'timestamp'], [{ event: 'Lead', properties: { value: 'lots' } }, 'properties.value'],
      [{ event: 'Lead', context: { ip: '999.1.1.1' } }, 'context.ip'], [{ event: 'Lead', properties: { channel: 'fax' } }, 'properties.channel'],
      // Beyond the largest date JavaScript can hold (8.64e15 ms): a shape-valid number that is no date at all.
      [{ event: 'Lead', timestamp: 8640000000000001 }, 'timestamp'], [{ event: 'Lead', timestamp: '2026-02-30T10:00:00Z' }, 'timestamp'],
    ] as const) {
      const response = await post(body)
      expect(response.status, JSON.stringify(body)).toBe(422)
      const error = await response.json() as { message: string, code: string, errors: string[] }
      expect(error.code).toBe('INVALID_CONVERSION')
      expect(error.message, JSON.stringify(body)).toContain(expected)
    }
  })

  it('207 with the reason for an event the site does not know; a site event with no sendsAs is stored only', async () => {
    const unknown = await post({ event: 'Bought', messageId: 'unknown-1' })
    expect(unknown.status).toBe(207)
    expect((await unknown.json() as Body).events[0]).toMatchObject({ success: false, errors: [{ status: 'unknown_event' }] })
    const unmapped = await post({ event: 'newsletter', messageId: 'unmapped-1' })
    expect(unmapped.status).toBe(202)
    expect((await unmapped.json() as Body).events[0]!.message).toContain('sends as no standard event')
    expect(sentFor('unknown-1')).toHaveLength(0)
    expect(sentFor('unmapped-1')).toHaveLength(0)
  })

  it('maps a site event to its standard conversion', async () => {
    await post({ event: 'demo_booked', messageId: 'mapped-1' })
    expect(JSON.parse(sentFor('mapped-1')[0]!.body).events[0].name).toBe('Schedule')
  })
})

describe('delivery failures', () => {
  it('a 500 is retried by the worker and later succeeds', async () => {
    fake.queue({ status: 500, body: { message: 'Internal error' } })
    const response = await post({ event: 'Lead', messageId: 'retry-1' })
    expect(response.status).toBe(207)
    expect((await response.json() as Body).events[0]).toMatchObject({ success: false, errors: [{ provider: 'testads', status: 'retrying', message: 'Internal error' }] })
    await expect.poll(async () => (await sql<{ status: string, attempts: number }[]>(`select d.status, d.attempts from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = 'retry-1'`))[0], { timeout: 5000 })
      .toEqual({ status: 'sent', attempts: 2 })
    expect(sentFor('retry-1')).toHaveLength(2)
  })

  it('a 401 ends failed with the platform\'s message, and is not retried', async () => {
    const brokenKey = await app.createKey('broken')
    const response = await post({ event: 'Lead', messageId: 'auth-1' }, brokenKey)
    expect(response.status).toBe(207)
    expect((await response.json() as Body).events[0]).toMatchObject({ success: false, errors: [{ provider: 'testads', status: 'failed', message: 'Invalid access token' }] })
    await new Promise((r) => setTimeout(r, 300))
    expect(sentFor('auth-1')).toHaveLength(1)
  })

  it('gives up after the configured attempts, with the reason', async () => {
    fake.queue(...Array.from({ length: 3 }, () => ({ status: 503, body: { message: 'Service unavailable' } })))
    await post({ event: 'Lead', messageId: 'exhaust-1' })
    await expect.poll(async () => (await sql<{ status: string, attempts: number, error: string }[]>(`select d.status, d.attempts, d.error from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = 'exhaust-1'`))[0], { timeout: 5000 })
      .toEqual({ status: 'failed', attempts: 3, error: 'Service unavailable (gave up after 3 attempts)' })
  })

  it('a delivery left claimed by a crashed process is finished once its lease runs out', async () => {
    await post({ event: 'Lead', messageId: 'crash-1' })
    const [conversion] = await sql<{ id: string }[]>(`select id from conversions where message_id = 'crash-1'`)
    // As a process killed between writing the outbox row and its first attempt leaves it:
    await sql(`update deliveries set status = 'pending', attempts = 0, sent_at = null, locked_until = now() - interval '1 second' where conversion_id = ?`, [conversion!.id])
    const before = sentFor('crash-1').length
    await expect.poll(async () => (await sql<{ status: string }[]>(`select status from deliveries where conversion_id = ?`, [conversion!.id]))[0]!.status, { timeout: 5000 }).toBe('sent')
    expect(sentFor('crash-1').length).toBe(before + 1)
  })
})

describe('identity match and click-id recovery', () => {
  it('recovers click ids from earlier visits by dc_session_id or email, and reports their names', async () => {
    // Two visits of one person: an older one found by the email's hash, the current one by dc_session_id.
    const personHash = hashIdentity({ email: 'returning@example.com' }).email
    await sql(`insert into visits (id, site_id, session_id, email_hash, started_at, click_ids) values (gen_random_uuid(), 'demo', 'sess-0', ?, now() - interval '2 days', '{"gclid":"g-old","fbc":"fb.1.1.abc"}'::jsonb)`, [personHash])
    await sql(`insert into visits (id, site_id, session_id, started_at, click_ids) values (gen_random_uuid(), 'demo', 'sess-1', now() - interval '1 day', '{"gclid":"g-new","ttclid":"tt-1"}'::jsonb)`)
    await sql(`insert into visits (id, site_id, session_id, click_ids) values (gen_random_uuid(), 'other', 'sess-1', '{"msclkid":"not-this-site"}'::jsonb)`)
    const body = await (await post({ event: 'Lead', messageId: 'match-1', context: { traits: { email: 'Returning@Example.com' }, identifiers: { dc_session_id: 'sess-1', fbc: 'fb.1.2.given' } } })).json() as Body
    expect(body.events[0]!.identity).toEqual({ matched: 2, created: 0, enriched: ['gclid', 'ttclid'] })
    expect(JSON.parse(sentFor('match-1')[0]!.body).events[0].clickIds).toEqual({ gclid: 'g-new', fbc: 'fb.1.2.given', ttclid: 'tt-1' })

    const emailHash = (await sql<{ identity: { email: string } }[]>(`select identity from conversions where message_id = 'pii-1'`))[0]!.identity.email
    await sql(`insert into visits (id, site_id, session_id, email_hash, click_ids) values (gen_random_uuid(), 'demo', 'sess-2', ?, '{"li_fat_id":"li-1"}'::jsonb)`, [emailHash])
    const byEmail = await (await post({ event: 'Lead', messageId: 'match-2', context: { traits: { email: 'SECRET.person@example.com' } } })).json() as Body
    expect(byEmail.events[0]!.identity).toMatchObject({ matched: 1, enriched: ['li_fat_id'] })
  })

  it('does not deliver a conversion whose visit was a bot or denied consent, and says why', async () => {
    await sql(`insert into visits (id, site_id, session_id, is_bot) values (gen_random_uuid(), 'demo', 'bot-sess', true)`)
    await sql(`insert into visits (id, site_id, session_id, consent) values (gen_random_uuid(), 'demo', 'no-consent', 'denied')`)
    const bot = await (await post({ event: 'Lead', messageId: 'bot-1', context: { identifiers: { dc_session_id: 'bot-sess' } } })).json() as Body
    expect(bot.events[0]!.message).toBe('not sent: the matched visit was ruled a bot')
    const denied = await (await post({ event: 'Lead', messageId: 'consent-1', context: { identifiers: { dc_session_id: 'no-consent' } } })).json() as Body
    expect(denied.events[0]!.message).toBe('not sent: the visitor denied consent')
    expect(sentFor('bot-1')).toHaveLength(0)
    expect(sentFor('consent-1')).toHaveLength(0)
    expect(await sql(`select d.status, d.error from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = 'bot-1'`)).toEqual([{ status: 'skipped', error: 'the matched visit was ruled a bot' }])
  })
})

describe('delivery report', () => {
  it('lists deliveries by status and replays failed ones', async () => {
    const failed = await (await app.admin('GET', '/sites/broken/deliveries?status=failed')).json() as { deliveries: { id: string, message_id: string, provider: string, error: string, status: string }[] }
    expect(failed.deliveries).toEqual([expect.objectContaining({ message_id: 'auth-1', provider: 'testads', status: 'failed', error: 'Invalid access token' })])
    expect((await app.admin('GET', '/sites/broken/deliveries?status=nope')).status).toBe(400)
    const before = sentFor('auth-1').length
    const replay = await app.admin('POST', '/sites/broken/deliveries/retry', { id: failed.deliveries[0]!.id })
    expect(await replay.json()).toEqual({ requeued: [failed.deliveries[0]!.id] })
    await expect.poll(() => sentFor('auth-1').length, { timeout: 5000 }).toBe(before + 1)
    expect((await app.admin('POST', '/sites/broken/deliveries/retry', {})).status).toBe(400)
  })
})

describe('holding and hooks', () => {
  it('holds a "when qualified" event: stored as held, nothing sent', async () => {
    const held = await heldApp.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': heldKey }, body: JSON.stringify({ event: 'demo_booked', messageId: 'held-2' }),
    })
    expect(held.status).toBe(202)
    expect((await held.json() as Body).events[0]!.message).toBe('held until qualified')
    const [row] = await heldApp.dcgate.database.orm.em.getConnection().execute<{ state: string }[]>(`select state from conversions where message_id = 'held-2'`)
    expect(row!.state).toBe('held')
    expect(await heldApp.dcgate.database.orm.em.getConnection().execute(`select 1 from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = 'held-2'`)).toHaveLength(0)
    expect(sentFor('held-2')).toHaveLength(0)
  })

  it('does not call conversion:before-deliver for a repeated messageId', async () => {
    const before = hookCalls.length
    for (let i = 0; i < 3; i++) await heldApp.request('/api/v1/conversions/automation', { method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': heldKey }, body: JSON.stringify({ event: 'Lead', messageId: 'hooked-1' }) })
    expect(hookCalls.slice(before)).toEqual(['hooked-1'])
  })

  it('never echoes a rejected value in a 422', async () => {
    const response = await post({ event: 'Lead', timestamp: 1.5, properties: { items: [{ quantity: 2.5 }] } })
    expect(response.status).toBe(422)
    const text = await response.text()
    expect(text).not.toContain('1.5')
    expect(text).not.toContain('2.5')
  })
})

describe('an adapter that throws', () => {
  it('ends the delivery failed with the reason instead of retrying forever', async () => {
    const throwing = { ...testPlatform, name: 'throwing', parseResponse: () => { throw new Error('unexpected body shape') } }
    const broken = await bootTestApp({
      plugins: ['intake'], delivery: { workerIntervalMs: 25, leaseSeconds: 1 },
      sites: [{ id: 'demo', name: 'Demo', destinations: { throwing: { baseUrl: fake.url, token: 'good' } } }],
    }, { adapters: [throwing], builtInPlugins })
    try {
      const brokenKey = await broken.createKey('demo')
      const response = await broken.request('/api/v1/conversions/automation', { method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': brokenKey }, body: JSON.stringify({ event: 'Lead', messageId: 'throws-1' }) })
      expect((await response.json() as Body).events[0]!.errors).toEqual([{ provider: 'throwing', status: 'failed', message: expect.stringContaining('unexpected body shape') }])
      await new Promise((resolve) => setTimeout(resolve, 1500))
      expect(sentFor('throws-1')).toHaveLength(1)
    }
    finally {
      await broken.close()
    }
  })
})
