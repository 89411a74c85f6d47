import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import { defineAdPlatform } from '../../core/registry.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

/**
 * A platform that answers per event, as most real ones do for a batch: `{ results: [{ id, error? }] }`. Its fake
 * refuses every event whose id contains "bad", accepts the rest, and notes when each request came.
 */
const perEventPlatform = (maxRequestsPerSecond?: number) => defineAdPlatform({
  name: 'batchads',
  apiVersion: 'v1',
  options: v.object({ baseUrl: v.pipe(v.string(), v.url()) }),
  maxBatchSize: 10,
  maxRequestsPerSecond,
  maxEventAgeDays: 7,
  toRequest: (events, options) => ({
    url: `${options.baseUrl}/v1/events`, method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ events: events.map((e) => ({ id: e.messageId })) }),
  }),
  parseResponse: (response, events) => {
    const { results } = JSON.parse(response.body) as { results: { id: string, error?: string }[] }
    return events.map((event) => {
      const result = results.find((r) => r.id === event.messageId)
      return result?.error ? { status: 'rejected' as const, message: result.error } : { status: 'sent' as const }
    })
  },
})

interface Platform { fake: FakeServer, times: number[], events: () => string[][] }

async function startPlatform(): Promise<Platform> {
  const times: number[] = []
  const fake = await startFakeServer((request) => {
    times.push(Date.now())
    const { events } = JSON.parse(request.body) as { events: { id: string }[] }
    // Answered in reverse order: the adapter must map results by id, not by position.
    return { status: 200, body: { results: events.map((e) => ({ id: e.id, ...(e.id.includes('bad') ? { error: 'invalid event' } : {}) })).reverse() } }
  })
  return { fake, times, events: () => fake.requests.map((r) => (JSON.parse(r.body) as { events: { id: string }[] }).events.map((e) => e.id)) }
}

async function boot(platform: Platform, maxRequestsPerSecond?: number, budgetWaitMs?: number): Promise<TestApp> {
  return bootTestApp({
    plugins: ['intake', 'export'],
    delivery: { workerIntervalMs: 50, batchWindowMs: 50, budgetWaitMs },
    sites: [{ id: 'demo', name: 'Demo', destinations: { batchads: { baseUrl: platform.fake.url } } }],
  }, { adapters: [perEventPlatform(maxRequestsPerSecond)], builtInPlugins })
}

/** Due deliveries as the worker finds them (after a retry's wait, or a crashed instance's lease). */
async function dueRows(app: TestApp, prefix: string, count: number): Promise<void> {
  const sql = (text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute(text, params)
  await sql(`insert into conversions (id, site_id, message_id, source, event, standard_event, occurred_at, channel, confirmation, state)
    select gen_random_uuid(), 'demo', ? || n || case when n % 7 = 0 then '-bad' else '' end, 'automation', 'Lead', 'Lead', now(), 'online', 'tracked', 'accepted'
    from generate_series(1, ?) n`, [prefix, count])
  await sql(`insert into deliveries (id, conversion_id, site_id, provider, status, next_attempt_at)
    select gen_random_uuid(), id, 'demo', 'batchads', 'pending', now() from conversions where message_id like ? || '%'`, [prefix])
}

async function statuses(app: TestApp, prefix: string): Promise<Record<string, string>> {
  const rows = await app.dcgate.database.orm.em.getConnection().execute<{ message_id: string, status: string }[]>(
    `select c.message_id, d.status from all_deliveries d join conversions c on c.id = d.conversion_id where c.message_id like ? || '%'`, [prefix])
  return Object.fromEntries(rows.map((r) => [r.message_id, r.status]))
}

describe('batched delivery', () => {
  let platform: Platform
  let app: TestApp
  beforeAll(async () => {
    platform = await startPlatform()
    app = await boot(platform)
  })
  afterAll(async () => {
    await app?.close()
    await platform?.fake.close()
  })

  it('the worker sends due deliveries of one platform together, up to its maxBatchSize, and maps each result back', async () => {
    await dueRows(app, 'due-', 25)
    await expect.poll(async () => Object.values(await statuses(app, 'due-')).filter((s) => s === 'pending').length, { timeout: 10_000 }).toBe(0)
    const batches = platform.events().filter((ids) => ids.some((id) => id.startsWith('due-')))
    expect(batches.length).toBeLessThanOrEqual(4)
    expect(batches.every((ids) => ids.length <= 10)).toBe(true)
    expect(batches.flat().sort()).toHaveLength(25)
    const status = await statuses(app, 'due-')
    // Every seventh was refused by the platform, in the same requests as the accepted ones.
    expect(Object.entries(status).filter(([, s]) => s === 'failed').map(([id]) => id).sort()).toEqual(['due-14-bad', 'due-21-bad', 'due-7-bad'])
    expect(Object.values(status).filter((s) => s === 'sent')).toHaveLength(22)
  })

  it('concurrent conversions answered inline share requests, and each answer says whether its event was sent', async () => {
    const key = await app.createKey('demo', 'batching')
    const before = platform.fake.requests.length
    const answers = await Promise.all(Array.from({ length: 30 }, async (_, i) => {
      const messageId = `inline-${i}${i % 10 === 3 ? '-bad' : ''}`
      const response = await app.request('/api/v1/conversions/automation', {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
        body: JSON.stringify({ event: 'Lead', messageId, context: { traits: { email: `buyer${i}@example.com` } } }),
      })
      return { messageId, status: response.status, body: (await response.json() as { events: unknown[] }).events[0] as { success: boolean, message: string, errors?: { message: string }[] } }
    }))
    const requests = platform.fake.requests.length - before
    expect(requests).toBeLessThan(30)
    for (const { messageId, status, body } of answers) {
      expect(status).toBe(messageId.endsWith('-bad') ? 207 : 202)
      if (messageId.endsWith('-bad')) expect(body).toMatchObject({ success: false, message: 'sent to 0 of 1 platforms', errors: [{ message: 'invalid event' }] })
      else expect(body).toMatchObject({ success: true, message: 'sent to 1 platform' })
    }
  })
})

describe('a platform request rate', () => {
  let platform: Platform
  let app: TestApp
  beforeAll(async () => {
    platform = await startPlatform()
    // No wait for the next window: what the budget cannot send at once is queued.
    app = await boot(platform, 2, 0)
  })
  afterAll(async () => {
    await app?.close()
    await platform?.fake.close()
  })

  it('is kept: at most maxRequestsPerSecond requests in any second, and every event still goes out', async () => {
    await dueRows(app, 'rate-', 50)
    await expect.poll(async () => Object.values(await statuses(app, 'rate-')).filter((s) => s === 'pending').length, { timeout: 15_000 }).toBe(0)
    expect(platform.events().flat()).toHaveLength(50)
    const perSecond = new Map<number, number>()
    for (const time of platform.times) perSecond.set(Math.floor(time / 1000), (perSecond.get(Math.floor(time / 1000)) ?? 0) + 1)
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(2)
  })

  it('does not hold an inline answer: what the budget cannot send now is queued, answered 202 as no error, and sent with a later batch', async () => {
    const key = await app.createKey('demo', 'rate')
    const answers = await Promise.all(Array.from({ length: 12 }, async (_, i) => {
      // Spread over 300 ms, so several requests would be needed where the budget allows one every 500 ms.
      await new Promise((resolve) => setTimeout(resolve, i * 25))
      const response = await app.request('/api/v1/conversions/automation', {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
        body: JSON.stringify({ event: 'Lead', messageId: `queued-${i}`, context: { traits: { email: `lead${i}@example.com` } } }),
      })
      const { success, message, errors } = (await response.json() as { events: { success: boolean, message: string, errors?: unknown[] }[] }).events[0]!
      return { status: response.status, success, message, ...(errors ? { errors } : {}) }
    }))
    const queued = answers.filter((a) => a.message !== 'sent to 1 platform')
    expect(queued.length).toBeGreaterThan(0)
    expect(queued[0]).toEqual({ status: 202, success: true, message: 'queued: batchads takes at most 2 requests a second; it goes with the next batch' })
    expect(answers.every((a) => a.status === 202 && a.success)).toBe(true)
    await expect.poll(async () => Object.values(await statuses(app, 'queued-')).filter((s) => s !== 'sent').length, { timeout: 15_000 }).toBe(0)
    const sent = platform.events().flat().filter((id) => id.startsWith('queued-'))
    expect(sent.sort()).toEqual(Array.from({ length: 12 }, (_, i) => `queued-${i}`).sort())
  })
})

describe('a platform request rate, with time to wait for the next window', () => {
  let platform: Platform
  let app: TestApp
  beforeAll(async () => {
    platform = await startPlatform()
    app = await boot(platform, 2, 1000)
  })
  afterAll(async () => {
    await app?.close()
    await platform?.fake.close()
  })

  it('holds an inline answer until the next window opens, within delivery.budgetWaitMs, and answers with the platform\'s verdict', async () => {
    const key = await app.createKey('demo', 'wait')
    const post = (messageId: string) => app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
      body: JSON.stringify({ event: 'Lead', messageId, context: { traits: { email: `${messageId}@example.com` } } }),
    }).then(async (response) => {
      const { success, message, errors } = (await response.json() as { events: { success: boolean, message: string, errors?: unknown[] }[] }).events[0]!
      return { status: response.status, success, message, ...(errors ? { errors } : {}) }
    })
    // At the start of a second, two conversions one after the other use up its two requests.
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20))
    await post('wait-a')
    await post('wait-b')
    const started = Date.now()
    const later = await Promise.all(['wait-c', 'wait-d-bad', 'wait-e'].map(post))
    expect(Date.now() - started).toBeLessThan(1500)
    expect(later).toEqual([
      { status: 202, success: true, message: 'sent to 1 platform' },
      { status: 207, success: false, message: 'sent to 0 of 1 platforms', errors: [{ provider: 'batchads', status: 'failed', message: 'invalid event' }] },
      { status: 202, success: true, message: 'sent to 1 platform' },
    ])
    // The three shared the next second's first request.
    expect(platform.events().at(-1)!.sort()).toEqual(['wait-c', 'wait-d-bad', 'wait-e'])
  })
})
