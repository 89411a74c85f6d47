import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { createBrowser, uniqueEmail, type Browser } from './support.ts'

// The Setup, Data deletion and Audit log pages as a site owner reads them.
const OWNER = uniqueEmail('owner', 'shop.example')
let app: TestApp
let operator: Browser

beforeAll(async () => {
  app = await bootTestApp({
    server: { trustProxy: true, baseUrl: 'https://track.shop.example' },
    plugins: ['capture', 'intake', 'release', 'export', 'dsar', 'dashboard'],
    sites: [{
      id: 'demo', name: 'Demo shop', members: [OWNER], firstPartyHost: 't.shop.example',
      sources: { zapier: { secret: 'zapier-secret-0123456789abcdef' } },
      events: [{ key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule', release: 'when_qualified' }, { key: 'newsletter', name: 'Newsletter', sendsAs: null }],
    }],
  })
  operator = createBrowser(app)
  await operator.signInAsOperator(app.dcgate.adminToken)
})
afterAll(() => app?.close())

describe('Setup', () => {
  it('shows the script tag, the release URL with its secret, the webhook URLs, the first-party host and the events', async () => {
    const site = await (await app.admin('GET', '/sites/demo')).json() as { cop_key: string, release_secret: string }
    const { status, text } = await operator.get('/dashboard/sites/demo/setup')
    expect(status).toBe(200)
    expect(text).toContain(`https://track.shop.example/script?cop_key=${site.cop_key}`)
    expect(text).toContain(`https://track.shop.example/api/v1/crm-release/${site.cop_key}/${site.release_secret}`)
    expect(text).toContain(`https://track.shop.example/api/v1/conversions/zapier/${site.cop_key}`)
    expect(text).toContain('t.shop.example')
    expect(text).toContain('Not verified')
    expect(text).toMatch(/<code>demo_booked<\/code><\/td><td>Demo booked<\/td><td>when qualified<\/td><td>Schedule<\/td>/)
    expect(text).toMatch(/<code>newsletter<\/code><\/td><td>Newsletter<\/td><td>immediately<\/td><td><span class="muted">not sent<\/span><\/td>/)
    expect(text.match(/data-copy="/g)?.length).toBeGreaterThanOrEqual(3)
  })
})

describe('Data deletion', () => {
  it('lists a request with its status, masked email, dates and proof link, never the address', async () => {
    const key = await app.createKey()
    const erased = await app.request('/api/v1/data-deletion', {
      method: 'POST', headers: { 'x-dc-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ann.lee@example.com' }),
    })
    const { confirmation_code: code } = await erased.json() as { confirmation_code: string }
    const { status, text } = await operator.get('/dashboard/sites/demo/deletion')
    expect(status).toBe(200)
    expect(text).toContain('a***@e***.com')
    expect(text).not.toContain('ann.lee@example.com')
    expect(text).toContain('>completed</span>')
    expect(text).toContain(`href="https://track.shop.example/public/dsar/status/${code}"`)
    expect(text.match(/<time datetime="/g)?.length).toBeGreaterThanOrEqual(3)
  })
})

describe('Audit log', () => {
  it('shows a member the site\'s actions but not the operator\'s sign-ins', async () => {
    await operator.get('/dashboard/sites/demo/keys')
    await operator.post('/dashboard/sites/demo/keys/create', { name: 'for-the-log' })
    const member = createBrowser(app)
    await member.signInAsMember(OWNER)
    const seen = await member.get('/dashboard/sites/demo/audit')
    expect(seen.status).toBe(200)
    expect(seen.text).toContain('for-the-log (dcp_')
    expect(seen.text).not.toContain('admin token')
    expect((await operator.get('/dashboard/sites/demo/audit')).text).toContain('admin token')
  })
})
