/**
 * A shop owner sets up a site without a developer (issue 28), in a real Chromium against two real dcgate processes
 * on one PostgreSQL database and one Redis: the operator creates the site with its member; the member signs in with
 * the emailed link, connects Google through the OAuth flow of a fake that speaks Google's authorization and token
 * endpoints and lists the account's conversion actions, picks one, sends a test event (which Google receives with
 * `validateOnly: true`), makes a key, and a real Purchase is delivered, by the instance the owner used and by a second
 * one that was started before the site existed. No config file is edited and nothing restarts. Each step is written
 * as a screenshot to docs/dashboard/walkthrough-*.png, which docs/dashboard.md walks through.
 *
 * Needs PostgreSQL and Redis (two instances share them): E2E_DATABASE_URL and E2E_REDIS_URL, or DATABASE_URL and
 * REDIS_URL; `.ci/run` passes the machine's services.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresDatabase } from '../helpers/database.ts'
import { loaderMessage } from '../helpers/loader-message.ts'
import { freePort, REPO_ROOT, startServerProcess, type ServerProcess } from '../helpers/server-process.ts'
import { startFakeGoogleAccount, type FakeGoogleAccount } from '../fakes/oauth/google-account.ts'
import { SLOW, signInByEmailedLink, until } from './mail-and-wait.ts'
import { CHROMIUM_ARGS } from './support.ts'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const DATABASE_URL = process.env.E2E_DATABASE_URL ?? process.env.DATABASE_URL
const REDIS_URL = process.env.E2E_REDIS_URL ?? process.env.REDIS_URL
const ADMIN_TOKEN = `e2e-admin-${randomBytes(12).toString('hex')}`
/** Unique per run: the sign-in limits live in Redis, which runs on this machine share. */
const OWNER = `anna.${randomBytes(3).toString('hex')}@corner-bakery.example`
const APP = { clientId: 'dcgate-e2e.apps.googleusercontent.com', clientSecret: 'GOCSPX-e2e-secret' }
const SHOTS = join(REPO_ROOT, 'docs/dashboard')

let google: FakeGoogleAccount
let first: ServerProcess
let second: ServerProcess
let database: { url: string, drop: () => Promise<void> }
let browser: Browser
let operator: Page
let owner: Page
let key = ''

beforeAll(async () => {
  if (!DATABASE_URL || !REDIS_URL) throw new Error('The walkthrough needs PostgreSQL and Redis: set E2E_DATABASE_URL and E2E_REDIS_URL (or DATABASE_URL and REDIS_URL)')
  const [portA, portB] = [await freePort(), await freePort()]
  const baseA = `http://127.0.0.1:${portA}`
  ;[google, database] = await Promise.all([
    startFakeGoogleAccount({
      ...APP, redirectUri: `${baseA}/dashboard/oauth/google/callback`,
      customers: { 1234567890: { name: 'Corner Bakery', actions: { 111: 'Online order', 222: 'Newsletter sign-up' } } },
    }),
    createPostgresDatabase(DATABASE_URL),
  ])
  // Several instances share the database, Redis and the server secret (docs/deployment.md, "Many instances").
  const env = { DATABASE_URL: database.url, REDIS_URL, DCGATE_SERVER_SECRET: randomBytes(32).toString('base64url') }
  // The second instance starts first: it must take up the site the dashboard makes later, without a restart.
  second = await startServerProcess({ config: config(`http://127.0.0.1:${portB}`), env, port: portB })
  first = await startServerProcess({ config: config(baseA), env, port: portA })
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
  operator = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
  owner = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
  mkdirSync(SHOTS, { recursive: true })
})
afterAll(async () => {
  await browser?.close().catch(() => undefined)
  await first?.close()
  await second?.close()
  await google?.close()
  await database?.drop()
})

const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `walkthrough-${name}.png`), fullPage: true })

describe('the operator', () => {
  it('signs in and creates the site with its member; a wrong field gets the config loader\'s message beside it', async () => {
    await operator.goto(`${first.url}/dashboard`)
    await operator.getByLabel('Admin token').fill(ADMIN_TOKEN)
    await operator.getByRole('button', { name: 'Sign in', exact: true }).click()
    await operator.getByRole('link', { name: 'New site' }).click()
    await operator.getByLabel('Site id').fill('bakery')
    await operator.getByLabel('Name').fill('Corner Bakery')
    await operator.getByLabel('Domains').fill('corner-bakery.example')
    await operator.getByLabel('Members').fill('anna at corner-bakery')
    await operator.getByRole('button', { name: 'Create site' }).click()
    const [expected] = loaderMessage({ id: 'bakery', name: 'Corner Bakery', domains: ['corner-bakery.example'], members: ['anna at corner-bakery'] })
    await expect.poll(() => operator.locator('#field-members-error').textContent(), SLOW).toBe(expected)
    expect(await operator.getByLabel('Members').getAttribute('aria-invalid')).toBe('true')
    await shot(operator, '1-new-site-error')

    await operator.getByLabel('Members').fill(OWNER)
    await operator.getByRole('button', { name: 'Create site' }).click()
    await expect.poll(() => operator.getByRole('status').textContent(), SLOW).toContain('Site “Corner Bakery” created')
    await shot(operator, '2-site-created')
  })

  it('sees a config-file site read-only', async () => {
    await operator.goto(`${first.url}/dashboard/sites/configured/settings`)
    expect(await operator.getByText('managed in the config file').count()).toBeGreaterThan(0)
    expect(await operator.getByRole('button', { name: 'Save' }).count()).toBe(0)
  })
})

describe('the shop owner (a member who may edit)', () => {
  it('signs in with the emailed link and sees the new site', async () => {
    await signInByEmailedLink(owner, first, OWNER)
    await expect.poll(() => owner.getByRole('link', { name: 'Corner Bakery' }).count(), SLOW).toBe(1)
    expect(await owner.getByRole('link', { name: 'Config shop' }).count()).toBe(0)
  })

  it('connects Google Ads: consent at Google, then picks the account and the conversion action from the lists', async () => {
    await owner.getByRole('link', { name: 'Corner Bakery' }).click()
    await owner.getByRole('link', { name: 'Setup', exact: true }).click()
    await shot(owner, '3-setup-not-connected')
    await owner.getByRole('button', { name: 'Connect Google Ads' }).click()
    // Google's consent page answered (the fake grants at once); the browser is back on the pick page.
    await expect.poll(() => owner.getByRole('heading', { name: 'Connect Google Ads' }).count(), SLOW).toBe(1)
    await owner.getByLabel('Google Ads account').selectOption({ label: 'Corner Bakery (123-456-7890)' })
    await owner.getByLabel('Purchase', { exact: true }).selectOption({ label: 'Online order — Corner Bakery' })
    await shot(owner, '4-pick-conversion-action')
    await owner.getByRole('button', { name: 'Connect', exact: true }).click()
    await expect.poll(() => owner.getByRole('status').textContent(), SLOW).toContain('Google Ads is connected.')
    // The PKCE verifier went with the code, and Google saw the scopes of both APIs.
    const authorize = google.connect.requests.find((r) => r.path.startsWith('/o/oauth2/v2/auth'))!
    expect(new URL(authorize.path, google.url).searchParams.get('code_challenge_method')).toBe('S256')
    expect(google.connect.requests.find((r) => r.path === '/token')!.body).toContain('code_verifier=')
  })

  it('sends a test event, which Google receives with validateOnly and records nothing', async () => {
    const row = owner.getByRole('row', { name: /Google Ads/ }).filter({ has: owner.getByRole('button', { name: 'Send test event to Google Ads' }) })
    await expect.poll(() => row.count(), SLOW).toBe(1)
    await row.getByLabel('Event', { exact: true }).selectOption('Purchase')
    await row.getByRole('button', { name: 'Send test event to Google Ads' }).click()
    await expect.poll(() => owner.getByRole('status').textContent(), SLOW).toContain('Google Ads · Send test event (Purchase): OK (HTTP 200)')
    await shot(owner, '5-test-event-sent')
    const sent = google.ads.ingests.at(-1)!
    expect(sent.body.validateOnly).toBe(true)
    expect(sent.body.destinations[0]).toMatchObject({ productDestinationId: '111', operatingAccount: { accountId: '1234567890' } })
    expect(google.ads.conversions).toEqual([])
  })

  it('makes a key for the shop\'s server', async () => {
    await owner.getByRole('link', { name: 'Keys', exact: true }).click()
    await owner.getByLabel('Name').fill('shop backend')
    await owner.getByRole('button', { name: 'Create key' }).click()
    key = await owner.getByLabel('The new key').inputValue()
    expect(key).toMatch(/^dcp_[\w-]{43}$/)
  })
})

describe('the first real conversion', () => {
  it('is delivered to the picked conversion action by the instance the owner used', async () => {
    const answer = await purchase(first, 'order-1001')
    expect(answer).toMatchObject({ status: 202, body: { events: [{ success: true, message: 'sent to 1 platform' }] } })
    expect(recorded('order-1001')).toMatchObject({ customerId: '1234567890', conversion: { conversionAction: 'customers/1234567890/conversionActions/111' } })
  })

  it('is delivered by the second instance too, which took the site up without a restart', async () => {
    // The second instance reads dashboard changes every 2 s: its own Setup page shows Google Ads connected by then.
    const look = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
    await look.goto(`${second.url}/dashboard`)
    await look.getByLabel('Admin token').fill(ADMIN_TOKEN)
    await look.getByRole('button', { name: 'Sign in', exact: true }).click()
    await until(async () => {
      await look.goto(`${second.url}/dashboard/sites/bakery/setup`)
      return await look.getByRole('button', { name: 'Disconnect Google Ads' }).count() === 1
    }, 'Google Ads connected on the second instance')
    const answer = await purchase(second, 'order-1002')
    expect(answer.status).toBe(202)
    expect(answer.body).toMatchObject({ events: [{ success: true, message: 'sent to 1 platform' }] })
    expect(recorded('order-1002')).toMatchObject({ customerId: '1234567890', conversion: { conversionAction: 'customers/1234567890/conversionActions/111' } })
  })

  it('shows in the owner\'s overview and deliveries', async () => {
    await owner.getByRole('link', { name: 'Deliveries', exact: true }).click()
    await expect.poll(() => owner.getByRole('row', { name: /Google Ads/ }).count(), SLOW).toBeGreaterThanOrEqual(2)
    await shot(owner, '6-first-deliveries')
    await owner.getByRole('link', { name: 'Overview', exact: true }).click()
    await shot(owner, '7-overview')
  })
})

async function purchase(instance: ServerProcess, orderId: string): Promise<{ status: number, body: any }> {
  const response = await fetch(`${instance.url}/api/v1/conversions/automation`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, signal: AbortSignal.timeout(30_000),
    body: JSON.stringify({
      event: 'Purchase', messageId: orderId, properties: { value: 24.5, currency: 'EUR', order_id: orderId },
      context: { traits: { email: `buyer-${orderId}@example.com` }, identifiers: { gclid: `Cj0-${orderId}` }, ip: '203.0.113.9', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0.0.0' },
    }),
  })
  return { status: response.status, body: await response.json().catch(() => undefined) }
}

/** What the Google Ads account recorded for an order, once. */
function recorded(orderId: string) {
  const found = google.ads.conversions.filter((c) => c.conversion.orderId === orderId)
  expect(found).toHaveLength(1)
  return found[0]
}




function config(baseUrl: string): string {
  const value = {
    server: { host: '127.0.0.1', baseUrl },
    admin: { token: ADMIN_TOKEN },
    plugins: ['intake', 'dashboard'],
    delivery: { workerIntervalMs: 50 },
    // Sign-ins per IP are counted in the shared Redis too; every run here comes from 127.0.0.1.
    dashboard: { membersMayEdit: true, signInsPerIp: 1000 },
    oauth: { google: { ...APP, authorizeUrl: `${google.url}/o/oauth2/v2/auth`, tokenUrl: `${google.url}/token`, apiBaseUrl: google.url } },
    sites: [{ id: 'configured', name: 'Config shop', members: ['ops@config-shop.example'] }],
  }
  return `export default ${JSON.stringify(value, null, 2)}\n`
}
