import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { metaErrors, startFakeMeta, type FakeMeta } from '../fakes/meta.ts'
import { hashIdentity } from '../../core/identity/hash.ts'

// Meta requires event_source_url and client_user_agent on a website event (adapters/ads/meta/README.md): a server
// conversion takes them from its own fields, else the newest matched visit, else the site's URL; without both it is
// sent as system_generated. The fake refuses an incomplete website event as Meta does.
let app: TestApp
let meta: FakeMeta
let key: string

beforeAll(async () => {
  meta = await startFakeMeta()
  app = await bootTestApp({
    plugins: ['intake'],
    delivery: { retryBaseMs: 40, retryMaxMs: 200, workerIntervalMs: 25 },
    sites: [{ id: 'shop', name: 'Shop', domains: ['shop.example.com'], destinations: { meta: { pixelId: meta.pixelId, accessToken: meta.accessToken, baseUrl: meta.url } } }],
  })
  key = await app.createKey('shop')
})
afterAll(async () => {
  await app?.close()
  await meta?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const post = (body: unknown) => app.request('/api/v1/conversions/automation', {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, body: JSON.stringify(body),
})
const sentEvent = (messageId: string) => meta.events.find((e) => e.event_id === messageId)
const stored = async (messageId: string) => (await sql<{ page_url: string | null, user_agent: string | null }[]>(
  `select page_url, user_agent from conversions where message_id = ?`, [messageId]))[0]

const VISIT_AGENT = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148'

describe('Meta website events carry event_source_url and client_user_agent', () => {
  it('takes both from the newest matched visit, sends a website event and stores them for the worker', async () => {
    // An older visit of the same person (found by email) loses to the dc_session_id's newer one.
    await sql(`insert into visits (id, site_id, session_id, email_hash, started_at, landing_url, user_agent) values (gen_random_uuid(), 'shop', 'sess-old', ?, now() - interval '2 days', 'https://shop.example.com/old', 'Old/1.0')`, [hashIdentity({ email: 'web@example.com' }).email])
    await sql(`insert into visits (id, site_id, session_id, started_at, landing_url, user_agent) values (gen_random_uuid(), 'shop', 'sess-web', now() - interval '1 hour', ?, ?)`, ['https://shop.example.com/landing?utm_source=fb', VISIT_AGENT])
    const response = await post({ event: 'Lead', messageId: 'lead-web-1', context: { traits: { email: 'web@example.com' }, identifiers: { dc_session_id: 'sess-web' } } })
    expect(response.status).toBe(202)
    expect((await response.json() as { events: unknown[] }).events[0]).toMatchObject({ success: true, message: 'sent to 1 platform' })
    expect(sentEvent('lead-web-1')).toMatchObject({
      action_source: 'website', event_source_url: 'https://shop.example.com/landing?utm_source=fb', user_data: expect.objectContaining({ client_user_agent: VISIT_AGENT }),
    })
    // Stored with the conversion; the user agent is cleared once every delivery has ended, as for any conversion.
    expect(await stored('lead-web-1')).toEqual({ page_url: 'https://shop.example.com/landing?utm_source=fb', user_agent: null })
  })

  it('the worker\'s retry sends the visit\'s page URL and user agent the first attempt filled in', async () => {
    meta.queue(metaErrors.throttled(4))
    const response = await post({ event: 'Lead', messageId: 'lead-retry-1', context: { traits: { email: 'web@example.com' }, identifiers: { dc_session_id: 'sess-web' } } })
    // 207: the inline attempt was throttled and is queued for a retry.
    expect(response.status).toBe(207)
    expect(sentEvent('lead-retry-1')).toBeUndefined()
    await expect.poll(() => sentEvent('lead-retry-1'), { timeout: 5000 }).toMatchObject({
      action_source: 'website', event_source_url: 'https://shop.example.com/landing?utm_source=fb', user_data: expect.objectContaining({ client_user_agent: VISIT_AGENT }),
    })
  })

  it('keeps the conversion\'s own page URL and user agent over the visit\'s', async () => {
    await post({ event: 'Lead', messageId: 'lead-own-1', context: { traits: { email: 'web@example.com' }, identifiers: { dc_session_id: 'sess-web' }, page: { url: 'https://shop.example.com/thanks' }, userAgent: 'Own/2.0' } })
    expect(sentEvent('lead-own-1')).toMatchObject({ action_source: 'website', event_source_url: 'https://shop.example.com/thanks', user_data: expect.objectContaining({ client_user_agent: 'Own/2.0' }) })
  })

  it('falls back to the site\'s URL for a conversion with a user agent but no page and no visit', async () => {
    await post({ event: 'Lead', messageId: 'lead-site-1', context: { traits: { email: 'site@example.com' }, userAgent: 'Own/2.0' } })
    expect(sentEvent('lead-site-1')).toMatchObject({ action_source: 'website', event_source_url: 'https://shop.example.com/' })
  })

  it('a sale in a store borrows no page or browser from the person\'s visit or the site', async () => {
    await post({ event: 'Purchase', messageId: 'store-1', properties: { value: 20, currency: 'EUR', channel: 'in_store' }, context: { traits: { email: 'web@example.com' }, identifiers: { dc_session_id: 'sess-web' } } })
    const event = sentEvent('store-1')
    expect(event).toMatchObject({ action_source: 'physical_store' })
    expect(event).not.toHaveProperty('event_source_url')
    expect(event!.user_data).not.toHaveProperty('client_user_agent')
    expect(await stored('store-1')).toEqual({ page_url: null, user_agent: null })
  })

  it('sends a conversion without any web context as system_generated instead of an incomplete website event', async () => {
    const response = await post({ event: 'Lead', messageId: 'lead-none-1', context: { traits: { email: 'none@example.com' } } })
    expect((await response.json() as { events: unknown[] }).events[0]).toMatchObject({ success: true, message: 'sent to 1 platform' })
    const event = sentEvent('lead-none-1')
    expect(event).toMatchObject({ action_source: 'system_generated' })
    expect(event!.user_data).not.toHaveProperty('client_user_agent')
  })
})
