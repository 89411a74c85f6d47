import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, health, type TestApp } from '../helpers/app.ts'
import { createBrowser, csrfOf, mailedLinks, uniqueEmail, uniqueIp } from './support.ts'

const OWNER = uniqueEmail('owner', 'shop.example')

let app: TestApp
beforeAll(async () => {
  app = await bootTestApp({
    server: { trustProxy: true },
    sites: [{ id: 'demo', name: 'Demo shop', members: [OWNER] }],
    dashboard: { signInsPerIp: 3, linksPerEmail: 2 },
  })
})
afterAll(() => app?.close())

const auditRows = () => app.dcgate.context.prepared<{ site_id: string | null, actor: string, action: string, detail: string | null }>(
  { name: '', text: 'select site_id, actor, action, detail from dashboard_audit order by created_at, id' }, [])

describe('keys', () => {
  it('creates a key shown in full once, which then works, and deletes it after a confirmation step', async () => {
    const browser = createBrowser(app)
    await browser.signInAsOperator(app.dcgate.adminToken)
    await browser.get('/dashboard/sites/demo/keys')
    const created = await browser.post('/dashboard/sites/demo/keys/create', { name: 'zapier <prod>' })
    expect(created.status).toBe(303)
    expect(created.headers.get('location')).toBe('/dashboard/sites/demo/keys')

    const shown = await browser.get('/dashboard/sites/demo/keys')
    const key = /value="(dcp_[\w-]{43})"/.exec(shown.text)?.[1]
    expect(key).toBeDefined()
    expect(shown.text).toContain('zapier &lt;prod&gt;')
    expect(shown.text).not.toContain('zapier <prod>')
    expect((await health(app, key)).status).toBe(200)
    const again = await browser.get('/dashboard/sites/demo/keys')
    expect(again.text).not.toContain(key)
    expect(again.text).toContain(key!.slice(0, 12))

    const confirm = await browser.get(`/dashboard/sites/demo/keys?confirm=${key!.slice(0, 12)}`)
    expect(confirm.text).toContain('This cannot be undone')
    const deleted = await browser.post('/dashboard/sites/demo/keys/delete', { prefix: key!.slice(0, 12) })
    expect(deleted.status).toBe(303)
    expect((await health(app, key)).status).toBe(401)
    const after = await browser.get('/dashboard/sites/demo/keys')
    expect(after.text).toContain(`Key ${key!.slice(0, 12)}… deleted`)
    expect(after.text).not.toContain(`<code>${key!.slice(0, 12)}</code>`)
  })

  it('refuses an empty name and an unknown prefix with a message, and changes nothing', async () => {
    const browser = createBrowser(app)
    await browser.signInAsOperator(app.dcgate.adminToken)
    await browser.get('/dashboard/sites/demo/keys')
    await browser.post('/dashboard/sites/demo/keys/create', { name: '   ' })
    expect((await browser.get('/dashboard/sites/demo/keys')).text).toContain('Give the key a name.')
    await browser.post('/dashboard/sites/demo/keys/delete', { prefix: 'dcp_AAAAAAAA' })
    expect((await browser.get('/dashboard/sites/demo/keys')).text).toContain('This site has no such key')
  })
})

describe('CSRF', () => {
  it('refuses a form without the session\'s token, or with another session\'s, with 403 and no key made', async () => {
    const browser = createBrowser(app)
    await browser.signInAsOperator(app.dcgate.adminToken)
    const other = createBrowser(app)
    await other.signInAsOperator(app.dcgate.adminToken)
    const before = await auditRows()
    expect((await browser.post('/dashboard/sites/demo/keys/create', { name: 'forged', csrf: '' })).status).toBe(403)
    const othersToken = csrfOf((await other.get('/dashboard/sites/demo/keys')).text)
    expect((await browser.post('/dashboard/sites/demo/keys/create', { name: 'forged', csrf: othersToken })).status).toBe(403)
    const keys = await (await app.admin('GET', '/sites/demo/keys')).json() as { keys: { name: string }[] }
    expect(keys.keys.map((k) => k.name)).not.toContain('forged')
    expect((await auditRows()).length).toBe(before.length)
  })

  it('refuses a cross-site post and a sign-in form without its cookie token', async () => {
    const browser = createBrowser(app)
    await browser.signInAsOperator(app.dcgate.adminToken)
    await browser.get('/dashboard/sites/demo/keys')
    expect((await browser.post('/dashboard/sites/demo/keys/create', { name: 'x' }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    const fresh = createBrowser(app)
    expect((await fresh.post('/dashboard/sign-in', { token: app.dcgate.adminToken, csrf: 'made-up' })).status).toBe(403)
  })

  it('answers a form that is not urlencoded with 415', async () => {
    const browser = createBrowser(app)
    await browser.signInAsOperator(app.dcgate.adminToken)
    const answer = await app.request('/dashboard/sites/demo/keys/create', {
      method: 'POST', headers: { 'content-type': 'application/json', 'cookie': `dcgate_dashboard=${browser.jar.get('dcgate_dashboard')}` }, body: '{"name":"x"}',
    })
    expect(answer.status).toBe(415)
  })
})

describe('rate limits', () => {
  it('limits sign-in attempts per IP address, right token or not', async () => {
    const browser = createBrowser(app)
    for (let i = 0; i < 3; i++) expect((await browser.signInAsOperator('wrong-token-xxxxxxxx')).status).toBe(401)
    const limited = await browser.signInAsOperator(app.dcgate.adminToken)
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await createBrowser(app).signInAsOperator(app.dcgate.adminToken)).status).toBe(303)
  })

  it('limits the links one address is sent from one IP; another IP may still ask', async () => {
    const ip = uniqueIp()
    const ask = async (from = ip) => {
      const browser = createBrowser(app, from)
      await browser.get('/dashboard')
      return browser.post('/dashboard/sign-in/email', { email: OWNER })
    }
    expect((await ask()).status).toBe(200)
    expect((await ask()).status).toBe(200)
    expect((await ask()).status).toBe(429)
    expect((await ask(uniqueIp())).status).toBe(200)
    // Mailed after the answers: wait for the three links (the audit log test below reads their rows).
    for (let tries = 0; new Set(await mailedLinks(app.dataDir, OWNER)).size < 3 && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(new Set(await mailedLinks(app.dataDir, OWNER)).size).toBe(3)
  })
})

describe('audit log', () => {
  it('records who did what on which site, and shows it on the Audit log page', async () => {
    const browser = createBrowser(app)
    await browser.signInAsOperator(app.dcgate.adminToken)
    await browser.get('/dashboard/sites/demo/keys')
    await browser.post('/dashboard/sites/demo/keys/create', { name: 'audited' })
    const rows = await auditRows()
    expect(rows).toContainEqual({ site_id: null, actor: 'operator', action: 'signed in', detail: 'admin token' })
    expect(rows).toContainEqual(expect.objectContaining({ site_id: 'demo', actor: 'operator', action: 'created key', detail: expect.stringMatching(/^audited \(dcp_[\w-]{8}\)$/) }))
    expect(rows).toContainEqual(expect.objectContaining({ actor: OWNER, action: 'sign-in link sent' }))
    const page = await browser.get('/dashboard/sites/demo/audit')
    expect(page.text).toContain('created key')
    expect(page.text).toContain('audited (dcp_')
  })
})

describe('hostile input', () => {
  it('answers a 4xx page, never a 500, for NUL, over-long values, unknown pages and odd site ids', async () => {
    const browser = createBrowser(app)
    await browser.signInAsOperator(app.dcgate.adminToken)
    expect((await browser.get('/dashboard/sites/demo/deletion?before=%00')).status).toBe(400)
    expect((await browser.get(`/dashboard/sites/demo/keys?confirm=${'x'.repeat(5000)}`)).status).toBe(400)
    expect((await browser.get('/dashboard/sites/demo/nope')).status).toBe(404)
    expect((await browser.get('/dashboard/sites/DEMO%00/keys')).status).toBe(404)
    expect((await browser.get('/dashboard/sites/demo/deletion?before=2026-01-01T00:00:00Z|not-a-uuid')).status).toBe(200)
    await browser.get('/dashboard/sites/demo/keys')
    expect((await browser.post('/dashboard/sites/demo/keys/create', { name: 'x'.repeat(20_000) })).status).toBe(400)
    expect((await browser.post('/dashboard/sites/demo/keys/create', { name: 'a\u0000b' })).status).toBe(400)
    expect((await browser.post('/dashboard/sites/demo/keys/nope', {})).status).toBe(404)
    expect((await browser.post('/dashboard/sites/demo/keys/toString', {})).status).toBe(404)
    const keys = await (await app.admin('GET', '/sites/demo/keys')).json() as { keys: { name: string }[] }
    expect(keys.keys.map((k) => k.name)).not.toContain('a\u0000b')
  })
})
