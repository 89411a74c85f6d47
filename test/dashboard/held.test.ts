import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.ts'
import { startFakeTestPlatform } from '../delivery/test-platform.ts'
import type { FakeServer } from '../fakes/server.ts'
import { uniqueEmail, type Browser } from './support.ts'
import { bootShopWithHeldLeads, signIn, until } from './pages-client.ts'

// Held leads as a site owner sees them: masked email, click ids present, Release sends one, Not a fit drops it.
let app: TestApp
const MEMBER = uniqueEmail('owner', 'other.example')
let fake: FakeServer
let operator: Browser
let key: string

beforeAll(async () => {
  fake = await startFakeTestPlatform()
  app = await bootShopWithHeldLeads(fake.url, MEMBER)
  key = await app.createKey('shop')
  await capture('lead-ann', { traits: { email: 'ann.lee@example.com' }, identifiers: { gclid: 'gclid-1', fbc: 'fb.1.1700000000000.abc' } })
  await capture('lead-bob', { traits: { email: 'bob@example.org' } })
  await capture('lead-hashed', { traits: { email: 'c0ffee'.repeat(10) + 'c0ff' } })
  operator = await signIn(app)
}, 60_000)
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

async function capture(messageId: string, context: Record<string, unknown>): Promise<void> {
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({ event: 'qualified_lead', messageId, context }),
  })
  expect(response.status).toBe(202)
}

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const lead = async (messageId: string) => (await sql<{ id: string, state: string }[]>(`select id, state from conversions where message_id = ?`, [messageId]))[0]!
const sentFor = (messageId: string) => fake.requests.filter((r) => r.body.includes(`"id":"${messageId}"`))

describe('Held leads page', () => {
  it('lists each held lead with its captured time, event, masked email and the click ids it carries', async () => {
    const { status, text } = await operator.get('/dashboard/sites/shop/held')
    expect(status).toBe(200)
    // Masked, yet told apart: first and last characters, and four hex digits of the address's hash.
    expect(text).toMatch(/a\*\*\*e@e\*\*\*e\.com ·[0-9a-f]{4}/)
    expect(text).toMatch(/b\*\*\*@e\*\*\*e\.org ·[0-9a-f]{4}/)
    expect(text).not.toContain('ann.lee@example.com')
    expect(text).toContain('fbc, gclid')
    expect(text).not.toContain('gclid-1')
    expect(text).toContain('hashed')
    expect(text.match(/<time datetime="/g)).toHaveLength(3)
    expect(text.match(/>Release<\/button>/g)).toHaveLength(3)
    expect(text.match(/>Not a fit<\/button>/g)).toHaveLength(3)
    expect(fake.requests).toHaveLength(0)
  })

  it('Release sends the lead to the platform as crm_qualified, and it leaves the list', async () => {
    const ann = await lead('lead-ann')
    const response = await operator.post('/dashboard/sites/shop/held/release', { id: ann.id })
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('/dashboard/sites/shop/held')
    await until(() => sentFor('lead-ann').length === 1)
    expect(JSON.parse(sentFor('lead-ann')[0]!.body).events[0]).toMatchObject({ id: 'lead-ann', name: 'Lead', clickIds: { gclid: 'gclid-1' } })
    expect(await lead('lead-ann')).toMatchObject({ state: 'released' })
    const { text } = await operator.get('/dashboard/sites/shop/held')
    expect(text).toContain('The lead was released')
    expect(text).not.toContain('a***e@e***e.com')
    expect(await sql(`select action, detail from dashboard_audit where action = 'held.release'`)).toEqual([expect.objectContaining({ detail: ann.id })])
  })

  it('Release works for a lead whose email arrived hashed', async () => {
    const hashed = await lead('lead-hashed')
    expect((await operator.post('/dashboard/sites/shop/held/release', { id: hashed.id })).status).toBe(303)
    await until(() => sentFor('lead-hashed').length === 1)
  })

  it('Not a fit drops the lead: never sent, no longer listed; a second click says it is no longer held', async () => {
    const bob = await lead('lead-bob')
    expect((await operator.post('/dashboard/sites/shop/held/not-a-fit', { id: bob.id })).status).toBe(303)
    expect(await lead('lead-bob')).toMatchObject({ state: 'dropped' })
    const { text } = await operator.get('/dashboard/sites/shop/held')
    expect(text).toContain('dropped as not a fit')
    expect(text).toContain('No lead is waiting.')
    expect((await operator.post('/dashboard/sites/shop/held/release', { id: bob.id })).status).toBe(303)
    expect((await operator.get('/dashboard/sites/shop/held')).text).toContain('no longer held')
    // The worker has had time to pick up anything due; nothing of Bob's went out.
    await until(async () => (await sql<{ n: number }[]>(`select count(*)::int as n from deliveries where status in ('pending', 'retrying')`))[0]!.n === 0)
    expect(sentFor('lead-bob')).toEqual([])
    expect(await sql(`select count(*)::int as n from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = 'lead-bob'`)).toEqual([{ n: 0 }])
  })

  it('refuses a lead id that is not one', async () => {
    expect((await operator.post('/dashboard/sites/shop/held/release', { id: '1 or 1=1' })).status).toBe(303)
    expect((await operator.get('/dashboard/sites/shop/held')).text).toContain('not a lead id')
  })

  it('a member of another site gets 403, and cannot act on its leads', async () => {
    await capture('lead-carol', { traits: { email: 'carol@example.net' } })
    const carol = await lead('lead-carol')
    const member = await signIn(app, MEMBER)
    expect((await member.get('/dashboard/sites/shop/held')).status).toBe(403)
    expect((await member.post('/dashboard/sites/shop/held/not-a-fit', { id: carol.id })).status).toBe(403)
    expect(await lead('lead-carol')).toMatchObject({ state: 'held' })
    // On its own site, another site's lead id is not found.
    expect((await member.post('/dashboard/sites/other/held/not-a-fit', { id: carol.id })).status).toBe(303)
    expect(await lead('lead-carol')).toMatchObject({ state: 'held' })
  })
})
