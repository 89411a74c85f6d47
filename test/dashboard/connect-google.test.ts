import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DestinationConnected, DestinationDisconnected } from '../../core/hooks.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeGoogleConnect, type FakeGoogleConnect } from '../fakes/oauth/google.ts'
import { createBrowser, uniqueEmail, type Browser } from './support.ts'

const BASE = 'https://dcgate.test'
const OWNER = uniqueEmail('owner', 'shop.example')
const APP = { clientId: 'dcgate-client.apps.googleusercontent.com', clientSecret: 'GOCSPX-secret' }

let google: FakeGoogleConnect
let app: TestApp
const connected: DestinationConnected[] = []

const oauthConfig = () => ({
  google: { ...APP, authorizeUrl: `${google.url}/o/oauth2/v2/auth`, tokenUrl: `${google.url}/token`, apiBaseUrl: google.url },
})

beforeAll(async () => {
  google = await startFakeGoogleConnect({
    ...APP, redirectUri: `${BASE}/dashboard/oauth/google/callback`,
    customers: {
      1234567890: { name: 'Shop GmbH', actions: { 111: 'Purchase (website)', 222: 'Lead form' } },
      2222222222: { name: 'Other brand', actions: { 333: 'Other purchase' } },
    },
  })
  app = await bootTestApp({
    server: { trustProxy: true, baseUrl: BASE },
    oauth: oauthConfig(),
  })
  // Connect stores into a site made in the dashboard (a config-file site is read-only).
  const made = await app.dcgate.context.managedSites.save({ id: 'shop', name: 'Shop', members: [OWNER] }, 'operator', 'create')
  expect(made.ok).toBe(true)
  app.dcgate.context.hooks.hook('dashboard:destination-connected', (payload) => void connected.push(payload))
})
afterAll(async () => {
  await app?.close()
  await google?.close()
})

async function operator(target = app): Promise<Browser> {
  const browser = createBrowser(target)
  await browser.signInAsOperator(target.dcgate.adminToken)
  await browser.get('/dashboard/sites/shop/setup')
  return browser
}

/** Presses Connect and lets the fake's consent page answer; returns the callback path the vendor sent the browser to. */
async function consent(browser: Browser): Promise<string> {
  const started = await browser.post('/dashboard/oauth/google/start', { site: 'shop' })
  expect(started.status).toBe(303)
  const authorize = new URL(started.headers.get('location')!)
  expect(authorize.origin + authorize.pathname).toBe(`${google.url}/o/oauth2/v2/auth`)
  expect(authorize.searchParams.get('redirect_uri')).toBe(`${BASE}/dashboard/oauth/google/callback`)
  expect(authorize.searchParams.get('scope')).toBe('https://www.googleapis.com/auth/datamanager https://www.googleapis.com/auth/adwords')
  expect(authorize.searchParams.get('access_type')).toBe('offline')
  expect(authorize.searchParams.get('code_challenge_method')).toBe('S256')
  const answer = await fetch(authorize, { redirect: 'manual' })
  const back = new URL(answer.headers.get('location')!)
  return back.pathname + back.search
}

describe('Connect Google', () => {
  it('lists customers and conversion actions after consent, and hands the picked options to the site', async () => {
    const browser = await operator()
    const setup = await browser.get('/dashboard/sites/shop/setup')
    expect(setup.text).toContain('Connect Google Ads')
    // Browsers hold a form's redirect to CSP form-action: the consent page's origin is named, or Connect goes nowhere.
    expect(setup.headers.get('content-security-policy')).toContain(`form-action 'self' ${google.url};`)
    const callback = await browser.get(await consent(browser))
    expect(callback.status).toBe(200)
    const pickPath = /href="(\/dashboard\/oauth\/google\/pick\?flow=[\w-]+)"/.exec(callback.text)?.[1]
    expect(pickPath).toBeDefined()

    const pick = await browser.get(pickPath!)
    expect(pick.status).toBe(200)
    expect(pick.text).toContain('Shop GmbH (123-456-7890)')
    expect(pick.text).toContain('Other brand (222-222-2222)')
    expect(pick.text).toContain('Purchase (website) — Shop GmbH')
    expect(pick.text).toContain('Lead form — Shop GmbH')
    // The PKCE verifier reached Google's token endpoint and matched the challenge (the fake refuses otherwise).
    expect(google.requests.find((r) => r.path === '/token')!.body).toContain('code_verifier=')

    const flow = new URL(pickPath!, BASE).searchParams.get('flow')!
    const done = await browser.post('/dashboard/oauth/google/pick', { flow, customer: '1234567890', 'action.Purchase': '1234567890/111', 'action.Lead': '1234567890/222' })
    expect(done.status).toBe(303)
    expect(done.headers.get('location')).toBe('/dashboard/sites/shop/setup')
    expect(connected).toHaveLength(1)
    const [event] = connected
    expect(event).toMatchObject({ siteId: 'shop', platform: 'google_ads', actor: 'operator' })
    expect(event!.options).toEqual({
      customerId: '1234567890', clientId: APP.clientId, clientSecret: APP.clientSecret, refreshToken: expect.stringMatching(/^rt-/),
      conversionActions: { Purchase: '111', Lead: '222' }, baseUrl: google.url, oauthUrl: `${google.url}/token`,
    })
    expect((await browser.get('/dashboard/sites/shop/setup')).text).toContain('Google Ads is connected.')
    // The flow is finished: the same pick cannot be posted twice.
    expect((await browser.post('/dashboard/oauth/google/pick', { flow, customer: '1234567890', 'action.Purchase': '1234567890/111' })).status).toBe(404)
  })

  it('refuses a replayed callback, and a conversion action of another customer', async () => {
    const browser = await operator()
    const callbackPath = await consent(browser)
    const first = await browser.get(callbackPath)
    expect(first.status).toBe(200)
    const replay = await browser.get(callbackPath)
    expect(replay.status).toBe(400)
    expect(replay.text).toContain('already used or has expired')
    // Hostile query values: a clear 400, never a 500.
    expect((await browser.get('/dashboard/oauth/google/callback?state=%00&code=x')).status).toBe(400)
    expect((await browser.get(`/dashboard/oauth/google/callback?state=${'a'.repeat(5000)}`)).status).toBe(400)

    const flow = /flow=([\w-]+)/.exec(first.text)![1]!
    const stranger = await operator()
    expect((await stranger.get(`/dashboard/oauth/google/pick?flow=${flow}`)).status).toBe(404)
    expect((await browser.get(`/dashboard/oauth/google/pick?flow=${flow}`)).status).toBe(200)
    const mixed = await browser.post('/dashboard/oauth/google/pick', { flow, customer: '1234567890', 'action.Purchase': '2222222222/333' })
    expect(mixed.status).toBe(400)
    expect(mixed.text).toContain('must belong to the Google Ads account picked')
  })

  it('shows the vendor\'s refusal: a declined consent, and a code whose PKCE verifier does not match', async () => {
    const browser = await operator()
    const started = await browser.post('/dashboard/oauth/google/start', { site: 'shop' })
    const authorize = new URL(started.headers.get('location')!)
    authorize.searchParams.set('code_challenge', 'x'.repeat(43)) // a challenge this flow's verifier does not match
    const back = new URL((await fetch(authorize, { redirect: 'manual' })).headers.get('location')!)
    const refused = await browser.get(back.pathname + back.search)
    expect(refused.status).toBe(502)
    expect(refused.text).toContain('Google refused: invalid_grant: Invalid code verifier.')

    const another = createBrowser(app)
    await another.signInAsOperator(app.dcgate.adminToken)
    await another.get('/dashboard/sites/shop/setup')
    google.auth.decline()
    const declined = await another.get(await consent(another))
    expect(declined.status).toBe(400)
    expect(declined.text).toContain('Google Ads did not grant access: access_denied (The user denied the request.)')
  })

  it('refuses a member while members may not edit', async () => {
    const member = createBrowser(app)
    expect((await member.signInAsMember(OWNER)).status).toBe(303)
    await member.get('/dashboard/sites/shop/setup')
    const started = await member.post('/dashboard/oauth/google/start', { site: 'shop' })
    expect(started.status).toBe(403)
  })
})

describe('Disconnect Google', () => {
  it('revokes the refresh token at Google and tells the site', async () => {
    const options = connected[0]?.options
    expect(options).toBeDefined()
    // The site holds the picked options now: its Setup page offers Disconnect.
    expect(app.dcgate.context.sites.byId('shop')?.config.destinations.google_ads).toMatchObject({ refreshToken: options!.refreshToken })
    const disconnected: DestinationDisconnected[] = []
    app.dcgate.context.hooks.hook('dashboard:destination-disconnected', (payload) => void disconnected.push(payload))
    const browser = await operator()
    expect((await browser.get('/dashboard/sites/shop/setup')).text).toContain('Disconnect Google Ads')
    const done = await browser.post('/dashboard/oauth/google/disconnect', { site: 'shop' })
    expect(done.status).toBe(303)
    expect(google.auth.revoked).toContain(options!.refreshToken)
    expect(disconnected).toEqual([{ siteId: 'shop', platform: 'google_ads', actor: 'operator' }])
    expect((await browser.get('/dashboard/sites/shop/setup')).text).toContain('Google Ads is disconnected (access revoked).')
    expect(app.dcgate.context.sites.byId('shop')?.config.destinations.google_ads).toBeUndefined()
  })
})
