import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeMeta, type FakeMeta } from '../fakes/meta.ts'
import { startFakeTikTok, type FakeTikTok } from '../fakes/tiktok.ts'
import { startFakeMicrosoftAds, type FakeMicrosoftAds } from '../fakes/microsoft-ads.ts'

// Issue 18 item 5: a lead held longer than a platform's 7-day event window (Meta, TikTok; Microsoft has none) is sent once qualified, as the platform
// documents CRM-qualified leads, instead of being skipped as too old; the delivery report says which rule applied.
let app: TestApp
let meta: FakeMeta
let tiktok: FakeTikTok
let microsoft: FakeMicrosoftAds
let key: string
let copKey: string
let secret: string
const DAY_MS = 86_400_000

beforeAll(async () => {
  ;[meta, tiktok, microsoft] = await Promise.all([startFakeMeta(), startFakeTikTok(), startFakeMicrosoftAds()])
  app = await bootTestApp({
    plugins: ['intake', 'release'],
    delivery: { workerIntervalMs: 25 },
    release: { expireAfterDays: 30 },
    sites: [{
      id: 'crm', name: 'CRM leads',
      destinations: {
        meta: { pixelId: meta.pixelId, accessToken: meta.accessToken, baseUrl: meta.url },
        tiktok: { pixelCode: tiktok.pixelCode, accessToken: tiktok.accessToken, baseUrl: tiktok.url },
        microsoft_ads: { tagId: microsoft.tagId, apiToken: microsoft.apiToken, baseUrl: microsoft.url },
      },
      events: [{ key: 'qualified_lead', name: 'Qualified lead', sendsAs: 'Lead', release: 'when_qualified' }],
    }],
  })
  key = await app.createKey('crm')
  const site = app.dcgate.context.sites.byId('crm')!
  copKey = site.copKey
  secret = site.releaseSecret
})
afterAll(async () => {
  await app?.close()
  await Promise.all([meta?.close(), tiktok?.close(), microsoft?.close()])
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

/** A lead made `daysAgo` days ago, held until qualified, then qualified now; answers when the release was made. */
async function holdAndRelease(messageId: string, email: string, daysAgo: number, identifiers: Record<string, string> = {}): Promise<number> {
  const held = await app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({ event: 'qualified_lead', messageId, timestamp: new Date(Date.now() - daysAgo * DAY_MS).toISOString(), context: { traits: { email }, identifiers, ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64)', page: { url: 'https://crm.example/contact' } } }),
  })
  expect(held.status).toBe(202)
  const before = Date.now()
  const released = await app.request(`/api/v1/crm-release/${copKey}/${secret}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ event_name: 'qualified_lead', email }),
  })
  expect(released.status).toBe(200)
  return before
}

const reportFor = async (messageId: string) => ((await (await app.admin('GET', '/sites/crm/deliveries')).json()) as { deliveries: Record<string, any>[] })
  .deliveries.filter((d) => d.message_id === messageId)

describe('a lead held 10 days, then qualified', () => {
  it('reaches Meta as a CRM-qualified lead (system_generated, the lead id) and TikTok with the qualification time; the report says so', async () => {
    const releasedAt = await holdAndRelease('late-1', 'late.lead@example.com', 10, { fb_lead_id: '1234567890123456' })
    await expect.poll(async () => (await reportFor('late-1')).map((d) => [d.provider, d.status]).sort(), { timeout: 15_000 })
      .toEqual([['meta', 'sent'], ['microsoft_ads', 'sent'], ['tiktok', 'sent']])

    const sentToMeta = meta.events.find((e) => e.event_id === 'late-1') as Record<string, any>
    expect(sentToMeta).toMatchObject({
      action_source: 'system_generated',
      user_data: { lead_id: '1234567890123456' },
      custom_data: { event_source: 'crm', lead_event_source: 'dcgate' },
    })
    // The qualification time, not the lead's: within the window, no earlier than the release call.
    expect(sentToMeta.event_time * 1000).toBeGreaterThanOrEqual(Math.floor(releasedAt / 1000) * 1000)

    const sentToTikTok = JSON.stringify(tiktok.events.find((e) => JSON.stringify(e).includes('"late-1"')))
    const time = JSON.parse(sentToTikTok) as { event_time?: number, timestamp?: string }
    const sentMs = time.event_time !== undefined ? time.event_time * 1000 : Date.parse(time.timestamp!)
    expect(sentMs).toBeGreaterThanOrEqual(Math.floor(releasedAt / 1000) * 1000)

    const rows = await reportFor('late-1')
    expect(rows.find((d) => d.provider === 'meta')!.note).toMatch(/^sent as a CRM-qualified lead \(action_source system_generated.*\(the lead was qualified 10 days after it was made; Meta takes events at most 7 days old\)$/)
    // Microsoft documents no event-age window: the lead goes with its own time, and there is nothing to note.
    expect(rows.find((d) => d.provider === 'microsoft_ads')!.note).toBeNull()
    const sentToMicrosoft = microsoft.events.find((e) => e.eventId === 'late-1') as { eventTime: number }
    expect(sentToMicrosoft.eventTime * 1000).toBeLessThan(releasedAt - 9 * DAY_MS)
    expect(rows.find((d) => d.provider === 'tiktok')!.note).toBe('sent with the qualification time as event time (the lead was qualified 10 days after it was made; TikTok takes events at most 7 days old)')
  })

  it('a lead qualified within the window is sent as usual, with its own time and no note', async () => {
    await holdAndRelease('early-1', 'early.lead@example.com', 2)
    await expect.poll(async () => (await reportFor('early-1')).map((d) => d.status), { timeout: 15_000 }).toEqual(['sent', 'sent', 'sent'])
    expect((await reportFor('early-1')).map((d) => d.note)).toEqual([null, null, null])
    const sentToMeta = meta.events.find((e) => e.event_id === 'early-1') as Record<string, any>
    expect(sentToMeta.action_source).toBe('website')
    expect(sentToMeta.user_data.lead_id).toBeUndefined()
  })

  it('the stored conversion keeps the lead\'s own time', async () => {
    const [row] = await sql<{ days: number }[]>(`select extract(epoch from now() - occurred_at) / 86400 as days from conversions where message_id = 'late-1'`)
    expect(Number(row!.days)).toBeGreaterThan(9.9)
  })
})
