import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import { defineCrmPoller } from '../../core/registry.ts'
import { sha256Hex } from '../../core/identity/hash.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeTestPlatform, testPlatform } from '../delivery/test-platform.ts'
import type { FakeServer } from '../fakes/server.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { CrmAuthError } from '../../adapters/crm/shared/errors.ts'

// The qualification gate end to end: a when-qualified conversion is held (nothing sent), released by the endpoint
// or by a CRM poller as crm_qualified with its original click ids, exactly once.
let app: TestApp
let fake: FakeServer
let key: string
let copKey: string
let secret: string
/** What the test CRM calls qualified; the poller below reads it like a CRM search. */
const crmQualified: { email: string, eventName: string }[] = []
/** What the next poll throws, when set. */
let pollFailure: unknown
const testCrm = defineCrmPoller({
  name: 'testcrm', apiVersion: 'v1', intervalSeconds: 300,
  options: v.object({ baseUrl: v.optional(v.string()) }),
  poll: async (_options, cursor) => {
    if (pollFailure) throw pollFailure
    const from = Number(cursor ?? 0)
    return { qualified: crmQualified.slice(from), cursor: String(crmQualified.length) }
  },
})

beforeAll(async () => {
  fake = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['intake', 'release'],
    delivery: { workerIntervalMs: 25 },
    release: { expireAfterDays: 30 },
    sites: [
      {
        id: 'shop', name: 'Shop', destinations: { testads: { baseUrl: fake.url, token: 'good' } }, crm: { testcrm: {} },
        events: [{ key: 'qualified_lead', name: 'Qualified lead', sendsAs: 'Lead', release: 'when_qualified' }],
      },
      { id: 'bare', name: 'No platforms', events: [{ key: 'qualified_lead', name: 'Qualified lead', sendsAs: 'Lead', release: 'when_qualified' }] },
      {
        id: 'private', name: 'Drops US opt-outs', consent: { usPrivacy: 'drop' as const }, destinations: { testads: { baseUrl: fake.url, token: 'good' } },
        events: [{ key: 'qualified_lead', name: 'Qualified lead', sendsAs: 'Lead', release: 'when_qualified' }],
      },
    ],
  }, { adapters: [testPlatform, testCrm], builtInPlugins })
  key = await app.createKey('shop')
  const site = app.dcgate.context.sites.byId('shop')!
  copKey = site.copKey
  secret = site.releaseSecret
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const capture = (messageId: string, email: string, apiKey = key) => app.request('/api/v1/conversions/automation', {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': apiKey },
  body: JSON.stringify({ event: 'qualified_lead', messageId, context: { traits: { email }, identifiers: { gclid: `gclid-${messageId}` }, ip: '203.0.113.5' } }),
})
const release = (body: unknown, path = `${copKey}/${secret}`) => app.request(`/api/v1/crm-release/${path}`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
})
const sentFor = (messageId: string) => fake.requests.filter((r) => r.body.includes(`"id":"${messageId}"`))

describe('POST /api/v1/crm-release/:api_key/:secret', () => {
  it("on a site with consent.usPrivacy 'drop', a held lead of a person who opted out is released as skipped with the reason, never sent", async () => {
    const site = app.dcgate.context.sites.byId('private')!
    const response = await app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': await app.createKey('private') },
      body: JSON.stringify({ event: 'qualified_lead', messageId: 'held-opt-out', context: { traits: { email: 'optout@example.com' }, consent: { usPrivacyOptOut: true } } }),
    })
    expect(response.status).toBe(202)
    expect((await release({ event_name: 'qualified_lead', email: 'optout@example.com' }, `${site.copKey}/${site.releaseSecret}`)).status).toBe(200)
    expect(await sql(`select d.status, d.error from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = ?`, ['held-opt-out']))
      .toEqual([{ status: 'skipped', error: 'the person opted out of the sale or sharing of their data (US state privacy law) in context.consent; consent.usPrivacy is drop' }])
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(sentFor('held-opt-out')).toHaveLength(0)
  })

  it('holds a when-qualified conversion (nothing sent), then releases it as crm_qualified with its click ids; a second call is 404', async () => {
    expect((await capture('held-1', 'Lead.One@Example.com')).status).toBe(202)
    expect(await sql('select state from conversions where message_id = ?', ['held-1'])).toEqual([{ state: 'held' }])
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(sentFor('held-1')).toEqual([])

    const response = await release({ event_name: 'qualified_lead', email: '  LEAD.one@example.COM ' })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ success: true, message: expect.stringContaining('Released 1 held conversion'), releasedCount: 1 })
    await expect.poll(() => sentFor('held-1').length).toBe(1)
    const sent = JSON.parse(sentFor('held-1')[0]!.body) as { events: { clickIds: Record<string, string>, ip: string }[] }
    expect(sent.events[0]).toMatchObject({ clickIds: { gclid: 'gclid-held-1' }, ip: '203.0.113.5' })
    expect(await sql('select state, confirmation, held_email from conversions where message_id = ?', ['held-1'])).toEqual([{ state: 'released', confirmation: 'crm_qualified', held_email: null }])

    const again = await release({ event_name: 'qualified_lead', email: 'lead.one@example.com' })
    expect(again.status).toBe(404)
    expect(await again.json()).toEqual({ success: false, message: expect.stringContaining('Nothing is held') })
  })

  it('releases every held row of that event and email, oldest first, each once under concurrent identical calls', async () => {
    await capture('many-1', 'many@example.com')
    await capture('many-2', 'many@example.com')
    const answers = await Promise.all(Array.from({ length: 10 }, () => release({ event_name: 'qualified_lead', email: 'many@example.com' })))
    const ok = answers.filter((r) => r.status === 200)
    expect(ok).toHaveLength(1)
    expect(answers.filter((r) => r.status === 404)).toHaveLength(9)
    expect(await ok[0]!.json()).toMatchObject({ releasedCount: 2 })
    await expect.poll(() => sentFor('many-1').length + sentFor('many-2').length).toBe(2)
  })

  it('finds a conversion whose email the integrator sent already hashed', async () => {
    const hashed = sha256Hex('hashed.lead@example.com')
    await app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
      body: JSON.stringify({ event: 'qualified_lead', messageId: 'hashed-1', context: { traits: { email: hashed } } }),
    })
    const response = await release({ event_name: 'qualified_lead', email: 'Hashed.Lead@example.com' })
    expect(await response.json()).toMatchObject({ success: true, releasedCount: 1 })
  })

  it('answers 401 for a wrong key or secret and 400 for a missing field, releasing nothing', async () => {
    await capture('guard-1', 'guard@example.com')
    const body = { event_name: 'qualified_lead', email: 'guard@example.com' }
    expect(await (await release(body, `cop_wrong/${secret}`)).json()).toEqual({ success: false, message: 'Invalid api_key' })
    const wrongSecret = await release(body, `${copKey}/not-the-secret`)
    expect(wrongSecret.status).toBe(401)
    expect(await wrongSecret.json()).toEqual({ success: false, message: 'Invalid secret' })
    for (const missing of [{ email: 'guard@example.com' }, { event_name: 'qualified_lead' }, { event_name: '', email: 'guard@example.com' }]) {
      const response = await release(missing)
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({ success: false, message: expect.stringMatching(/^(event_name|email): (is required|must be a string)/) })
    }
    for (const partial of [`/api/v1/crm-release/${copKey}`, `/api/v1/crm-release/${copKey}/`, '/api/v1/crm-release']) {
      const response = await app.request(partial, { method: 'POST', body: JSON.stringify(body) })
      expect(response.status, partial).toBe(400)
      expect(await response.json()).toEqual({ success: false, message: expect.stringContaining('api_key and the secret') })
    }
    expect(await sql('select state from conversions where message_id = ?', ['guard-1'])).toEqual([{ state: 'held' }])
  })

  it('on a site with no platform connected, the release still happens and the message says so', async () => {
    const bareKey = await app.createKey('bare')
    await capture('bare-1', 'bare@example.com', bareKey)
    const site = app.dcgate.context.sites.byId('bare')!
    const response = await release({ event_name: 'qualified_lead', email: 'bare@example.com' }, `${site.copKey}/${site.releaseSecret}`)
    expect(await response.json()).toEqual({ success: true, message: expect.stringContaining('no ad platform is connected'), releasedCount: 1 })
  })

  it('sends a release past the platform\'s event-age window with the qualification time as event time, and the report says so (issue 18)', async () => {
    await capture('late-1', 'late@example.com')
    await sql(`update conversions set occurred_at = now() - interval '10 days' where message_id = 'late-1'`)
    const releasedAt = Math.floor(Date.now() / 1000)
    expect((await release({ event_name: 'qualified_lead', email: 'late@example.com' })).status).toBe(200)
    await expect.poll(async () => (await sql<{ status: string }[]>(`select d.status from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = 'late-1'`))[0]?.status).toBe('sent')
    const [row] = await sql<{ note: string }[]>(`select d.note from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = 'late-1'`)
    expect(row!.note).toBe('sent with the qualification time as event time (the lead was qualified 10 days after it was made; testads takes events at most 7 days old)')
    const [sent] = sentFor('late-1').map((r) => (JSON.parse(r.body) as { events: { id: string, time: number }[] }).events.find((e) => e.id === 'late-1')!)
    expect(sent!.time).toBeGreaterThanOrEqual(releasedAt)
  })

  it('still skips a conversion past the window that was never held (a long outage), with the reason', async () => {
    const response = await app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
      body: JSON.stringify({ event: 'Lead', messageId: 'old-direct-1', timestamp: new Date(Date.now() - 10 * 86_400_000).toISOString(), context: { traits: { email: 'direct@example.com' } } }),
    })
    expect(response.status).toBeLessThan(300)
    await expect.poll(async () => (await sql<{ status: string }[]>(`select d.status from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = 'old-direct-1'`))[0]?.status).toBe('skipped')
    const [row] = await sql<{ error: string }[]>(`select d.error from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = 'old-direct-1'`)
    expect(row!.error).toMatch(/10 days ago; testads takes events at most 7 days old/)
    expect(sentFor('old-direct-1')).toEqual([])
  })
})

describe('held conversion lifecycle', () => {
  it('a dropped lead (not a fit) is never sent and can no longer be released', async () => {
    await capture('drop-1', 'drop@example.com')
    const [row] = await sql<{ id: string }[]>('select id from conversions where message_id = ?', ['drop-1'])
    const list = await (await app.admin('GET', '/sites/shop/held')).json() as { held: { id: string, email: string, expires_at: string }[] }
    expect(list.held.find((h) => h.id === row!.id)).toMatchObject({ email: 'drop@example.com', expires_at: expect.any(String) })
    expect((await app.admin('POST', `/sites/shop/held/${row!.id}/drop`)).status).toBe(200)
    expect((await release({ event_name: 'qualified_lead', email: 'drop@example.com' })).status).toBe(404)
    expect((await app.admin('POST', `/sites/shop/held/${row!.id}/drop`)).status).toBe(404)
  })

  it('an expired hold cannot be released', async () => {
    await capture('old-1', 'old@example.com')
    await sql(`update conversions set created_at = now() - interval '31 days' where message_id = 'old-1'`)
    expect((await release({ event_name: 'qualified_lead', email: 'old@example.com' })).status).toBe(404)
  })

  it('a data deletion for the email removes its held rows, also one whose email arrived hashed', async () => {
    await capture('erase-1', 'erase@example.com')
    await capture('erase-2', sha256Hex('erase@example.com'))
    await app.dcgate.hooks.callHook('dsar:erase', { siteId: 'shop', email: 'Erase@Example.com', emailHash: sha256Hex('erase@example.com') })
    expect(await sql(`select 1 from conversions where message_id in ('erase-1', 'erase-2')`)).toEqual([])
  })

  it('a dropped or expired hold no longer keeps the IP and browser', async () => {
    await capture('forget-1', 'forget@example.com')
    const [row] = await sql<{ id: string }[]>('select id from conversions where message_id = ?', ['forget-1'])
    await app.admin('POST', `/sites/shop/held/${row!.id}/drop`)
    expect(await sql('select ip, user_agent from conversions where id = ?', [row!.id])).toEqual([{ ip: null, user_agent: null }])
  })
})

describe('CRM pollers', () => {
  it('a lead the CRM marks qualified is released on the next poll, and the cursor keeps it from being polled again', async () => {
    await capture('crm-1', 'crm.lead@example.com')
    crmQualified.push({ email: 'crm.lead@example.com', eventName: 'qualified_lead' })
    await sql(`update crm_poll_state set next_run_at = now()`)
    await expect.poll(async () => {
      await sql(`update crm_poll_state set next_run_at = now() where cursor is null or cursor::int < ?`, [crmQualified.length])
      return (await sql<{ state: string }[]>('select state from conversions where message_id = ?', ['crm-1']))[0]?.state
    }, { timeout: 10_000, interval: 200 }).toBe('released')
    await expect.poll(() => sentFor('crm-1').length).toBe(1)
    const [state] = await sql<{ cursor: string, last_error: string | null }[]>(`select cursor, last_error from crm_poll_state where site_id = 'shop' and poller = 'testcrm'`)
    expect(state).toEqual({ cursor: String(crmQualified.length), last_error: null })
  })

  it('stores why a poll failed: a poller\'s own error with its message, anything else without it (it may quote an email)', async () => {
    const lastError = async () => (await sql<{ last_error: string | null }[]>(`select last_error from crm_poll_state where site_id = 'shop' and poller = 'testcrm'`))[0]?.last_error
    try {
      pollFailure = new TypeError('cannot read the lead of pii.person@example.com')
      await sql(`update crm_poll_state set next_run_at = now()`)
      await expect.poll(lastError, { timeout: 15_000, interval: 200 }).toBe('TypeError (message withheld: it may quote personal data)')
      pollFailure = new CrmAuthError('testcrm', 'TestCRM refused the token: create a new one', { status: 401 })
      await sql(`update crm_poll_state set next_run_at = now()`)
      await expect.poll(lastError, { timeout: 15_000, interval: 200 }).toBe('TestCRM refused the token: create a new one')
      // Credentials that need the operator are tried again in an hour, not at the next round.
      const [next] = await sql<{ later: boolean }[]>(`select next_run_at > now() + interval '59 minutes' as later from crm_poll_state where site_id = 'shop' and poller = 'testcrm'`)
      expect(next).toEqual({ later: true })
    }
    finally {
      pollFailure = undefined
    }
  })
})
