import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { onRedis } from '../helpers/database.ts'
import { createBrowser, mailedLinks, uniqueEmail, waitForLink } from './support.ts'

// Fresh addresses per run: the per-address link limit counts in the shared storage (Redis outlives a run).
const OWNER = uniqueEmail('owner', 'shop.example')
const SOMEONE = uniqueEmail('someone', 'other.example')
const STRANGER = uniqueEmail('stranger', 'evil.example')

let app: TestApp
beforeAll(async () => {
  app = await bootTestApp({
    // Each test browser comes from its own address (X-Forwarded-For), so the per-IP sign-in limit counts them apart.
    server: { trustProxy: true },
    sites: [
      { id: 'demo', name: 'Demo shop', members: [OWNER.toUpperCase()] },
      { id: 'other', name: 'Other shop', members: [SOMEONE] },
    ],
  })
})
afterAll(() => app?.close())

describe('signed out', () => {
  it('shows the admin token form and the email form', async () => {
    const page = await createBrowser(app).get('/dashboard')
    expect(page.status).toBe(200)
    expect(page.text).toContain('<label for="token">Admin token</label>')
    expect(page.text).toContain('type="password"')
    expect(page.text).toContain('>Sign in</button>')
    expect(page.text).toContain('<label for="email">Email</label>')
    expect(page.text).toContain('>Email me a sign-in link</button>')
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline')
  })

  it('sends a site page back to the sign-in', async () => {
    const page = await createBrowser(app).get('/dashboard/sites/demo/keys')
    expect(page.status).toBe(303)
    expect(page.headers.get('location')).toBe('/dashboard')
  })
})

describe('the operator', () => {
  it('signs in with the admin token and sees every site, by name', async () => {
    const browser = createBrowser(app)
    const signedIn = await browser.signInAsOperator(app.dcgate.adminToken)
    expect(signedIn.status).toBe(303)
    const home = await browser.get('/dashboard')
    expect(home.text).toContain('>Demo shop</a>')
    expect(home.text).toContain('>Other shop</a>')
    expect((await browser.get('/dashboard/sites/other/keys')).status).toBe(200)
  })

  it('gets 401 and no session for a wrong token', async () => {
    const browser = createBrowser(app)
    const refused = await browser.signInAsOperator('not-the-token-at-all')
    expect(refused.status).toBe(401)
    expect(refused.text).toContain('That is not the admin token.')
    expect(browser.jar.has('dcgate_dashboard')).toBe(false)
  })

  it('gets a session cookie that is HttpOnly, SameSite=Strict and limited to /dashboard; Secure only over HTTPS', async () => {
    const plain = createBrowser(app)
    await plain.get('/dashboard')
    const answer = await plain.post('/dashboard/sign-in', { token: app.dcgate.adminToken })
    const cookie = answer.headers.getSetCookie().find((line) => line.startsWith('dcgate_dashboard='))!
    expect(cookie).toMatch(/HttpOnly/i)
    expect(cookie).toMatch(/SameSite=Strict/i)
    expect(cookie).toMatch(/Path=\/dashboard/i)
    expect(cookie).not.toMatch(/Secure/i)

    const tls = createBrowser(app)
    await tls.get('https://dcgate.example/dashboard')
    const secure = await tls.post('https://dcgate.example/dashboard/sign-in', { token: app.dcgate.adminToken })
    expect(secure.headers.getSetCookie().find((line) => line.startsWith('dcgate_dashboard='))).toMatch(/; Secure/i)
  })

  it('signs out: the old cookie no longer opens a page', async () => {
    const browser = createBrowser(app)
    await browser.signInAsOperator(app.dcgate.adminToken)
    const cookie = browser.jar.get('dcgate_dashboard')!
    await browser.get('/dashboard')
    expect((await browser.post('/dashboard/sign-out')).status).toBe(303)
    const replay = await app.request('/dashboard/sites/demo/keys', { headers: { cookie: `dcgate_dashboard=${cookie}` }, redirect: 'manual' })
    expect(replay.status).toBe(303)
  })
})

describe('session expiry', () => {
  it('sends an expired session back to the sign-in, and forgets it', async () => {
    const browser = createBrowser(app)
    await browser.signInAsOperator(app.dcgate.adminToken)
    const id = browser.jar.get('dcgate_dashboard')!
    const key = `dashboard:sessions:${createHash('sha256').update(id).digest('hex')}`
    const { storage } = app.dcgate
    const session = await storage.getItem<{ expiresAt: number }>(key)
    expect(session?.expiresAt).toBeGreaterThan(Date.now() + 11 * 3600_000)
    await storage.setItem(key, { ...session, expiresAt: Date.now() - 1000 })
    const page = await browser.get('/dashboard/sites/demo/keys')
    expect(page.status).toBe(303)
    expect(page.headers.get('location')).toBe('/dashboard')
    expect(await storage.getItem(key)).toBeNull()
  })
})

describe('a member', () => {
  it('signs in with an emailed one-time link and sees only their sites', async () => {
    const browser = createBrowser(app)
    const signedIn = await browser.signInAsMember(OWNER)
    expect(signedIn.status).toBe(303)
    const home = await browser.get('/dashboard')
    expect(home.text).toContain('>Demo shop</a>')
    expect(home.text).not.toContain('Other shop')
    expect((await browser.get('/dashboard/sites/demo/keys')).status).toBe(200)
  })

  it('gets 403 on another site\'s pages and actions, and on a site that does not exist', async () => {
    const browser = createBrowser(app)
    await browser.signInAsMember(OWNER)
    await browser.get('/dashboard/sites/demo/keys')
    for (const path of ['/dashboard/sites/other/keys', '/dashboard/sites/other/setup', '/dashboard/sites/nosuchsite/keys']) {
      expect((await browser.get(path)).status).toBe(403)
    }
    expect((await browser.post('/dashboard/sites/other/keys/create', { name: 'sneaky' })).status).toBe(403)
    const keys = await (await app.admin('GET', '/sites/other/keys')).json() as { keys: unknown[] }
    expect(keys.keys).toEqual([])
  })

  it('uses a link once: the second use is refused', async () => {
    const browser = createBrowser(app)
    await browser.get('/dashboard')
    const before = (await mailedLinks(app.dataDir, SOMEONE)).length
    await browser.post('/dashboard/sign-in/email', { email: SOMEONE })
    const link = new URL(await waitForLink(app.dataDir, SOMEONE, before))
    const token = link.searchParams.get('token')!
    await browser.get(link.pathname + link.search)
    expect((await browser.post('/dashboard/link', { token })).status).toBe(303)
    const again = createBrowser(app)
    expect((await again.get(link.pathname + link.search)).status).toBe(400)
    await again.get('/dashboard')
    expect((await again.post('/dashboard/link', { token })).status).toBe(400)
  })

  it('uses a link once even when two browsers post it at the same moment', async () => {
    const asking = createBrowser(app)
    await asking.get('/dashboard')
    const before = (await mailedLinks(app.dataDir, SOMEONE)).length
    await asking.post('/dashboard/sign-in/email', { email: SOMEONE })
    const link = new URL(await waitForLink(app.dataDir, SOMEONE, before))
    const token = link.searchParams.get('token')!
    const browsers = Array.from({ length: 4 }, () => createBrowser(app))
    for (const browser of browsers) await browser.get(link.pathname + link.search)
    const statuses = await Promise.all(browsers.map(async (browser) => (await browser.post('/dashboard/link', { token })).status))
    expect(statuses.filter((status) => status === 303)).toHaveLength(1)
    expect(statuses.filter((status) => status === 400)).toHaveLength(3)
  })

  it('answers the same for an address that is no member, and mails it nothing', async () => {
    const browser = createBrowser(app)
    await browser.get('/dashboard')
    const answer = await browser.post('/dashboard/sign-in/email', { email: STRANGER })
    expect(answer.status).toBe(200)
    expect(answer.text).toContain('If this address belongs to a member')
    await new Promise((resolve) => setTimeout(resolve, 300)) // a member's mail would go out after the answer
    expect(await mailedLinks(app.dataDir, STRANGER)).toEqual([])
  })

  it('refuses an email field that is not one address, or holds a NUL, with a 4xx', async () => {
    const browser = createBrowser(app)
    for (const email of ['a@b.example, c@d.example', `${OWNER}\u0000`, 'x'.repeat(20_000)]) {
      await browser.get('/dashboard')
      const answer = await browser.post('/dashboard/sign-in/email', { email })
      expect(answer.status).toBe(400)
    }
    expect(await mailedLinks(app.dataDir, 'a@b.example')).toEqual([])
  })
})

describe('sessions in the shared storage (Redis)', () => {
  it.runIf(onRedis)('are known to every instance, and a new admin token ends the operator sessions opened with the old one', async () => {
    const sameToken = await bootTestApp({ admin: { token: app.dcgate.adminToken }, server: { trustProxy: true } })
    const newToken = await bootTestApp({ admin: { token: `rotated-${'x'.repeat(24)}` }, server: { trustProxy: true } })
    try {
      const browser = createBrowser(app)
      await browser.signInAsOperator(app.dcgate.adminToken)
      const cookie = `dcgate_dashboard=${browser.jar.get('dcgate_dashboard')}`
      const open = (other: typeof app) => other.request('/dashboard/sites/demo/keys', { headers: { cookie }, redirect: 'manual' })
      expect((await open(sameToken)).status).toBe(200)
      expect((await open(newToken)).status).toBe(303)
    }
    finally {
      await sameToken.close()
      await newToken.close()
    }
  })
})
