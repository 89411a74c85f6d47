/**
 * The tracking script in a real Chromium against a real dcgate process: visits, SPA page views, identification,
 * the done-when path of issue 5 (a browser visit's gclid reaches Google Ads with a later server-side conversion)
 * and bot verdicts. Every check reads what dcgate stored or what the fake platform received.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BrowserContext } from 'playwright-core'
import { DESKTOP_CHROME, identifiersSent, newVisitor, openVisitor, recordRequests, startE2E, US_IP, waitFor, type E2E } from './support.ts'

let e2e: E2E
const contexts: BrowserContext[] = []

beforeAll(async () => {
  e2e = await startE2E()
})
afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined)
  await e2e?.close()
})

/** A US visitor in a browser that looks like a person's: desktop Chrome user agent, navigator.webdriver false. */
const person = () => openVisitor(e2e, contexts, US_IP)

/** The stored visit of a session once `done` holds for it. */
function visit(sid: string, done: (row: Record<string, any>) => boolean = () => true) {
  return waitFor(async () => (await e2e.sql('select * from visits where session_id = $1', [sid]))[0], (row) => row !== undefined && done(row))
}

/** Moves, clicks and scrolls like a person reading the page. */
async function fidget(page: import('playwright-core').Page) {
  await page.mouse.move(200, 150, { steps: 5 })
  await page.mouse.move(420, 260, { steps: 8 })
  await page.mouse.click(600, 20)
  await page.mouse.wheel(0, 120)
}

describe('visits', () => {
  it('a landing with ?gclid= becomes a visit with the click id and the country; an SPA navigation adds a page view to it', async () => {
    const { sent, page } = await person()
    await page.goto(`${e2e.pageUrl}/?gclid=abc`)
    const { sid, vid } = await identifiersSent(sent)
    const landed = await visit(sid, (row) => row.page_count >= 1)
    expect(landed).toMatchObject({
      site_id: 'shop', visitor_id: vid, country: 'US', ip_address: US_IP, user_agent: DESKTOP_CHROME, consent: 'unknown',
      landing_url: `${e2e.pageUrl}/?gclid=abc`, page_count: 1, click_ids: expect.objectContaining({ gclid: 'abc' }),
      device_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    })

    await fidget(page)
    await page.click('#pricing')
    await page.waitForURL(`${e2e.pageUrl}/pricing`)
    const after = await visit(sid, (row) => row.page_count >= 2)
    expect(after).toMatchObject({ page_count: 2, landing_url: `${e2e.pageUrl}/?gclid=abc`, click_ids: expect.objectContaining({ gclid: 'abc' }) })
    const views = await e2e.sql('select kind, url, referrer, title from page_events where session_id = $1 order by occurred_at', [sid])
    expect(views).toEqual([
      { kind: 'pageview', url: `${e2e.pageUrl}/?gclid=abc`, referrer: null, title: 'E2E shop' },
      { kind: 'pageview', url: `${e2e.pageUrl}/pricing`, referrer: `${e2e.pageUrl}/?gclid=abc`, title: 'Pricing' },
    ])
    // The SPA view went out with the same session id.
    expect(sent.filter((r) => r.path === '/collect' && r.body.hits.some((h: { url: string }) => h.url.endsWith('/pricing'))).map((r) => r.body.sid)).toEqual([sid])
  })
})

describe('identification and the done-when path', () => {
  it('dcutils.identifyUser stores an identified user; a server conversion for the email then carries the visit\'s gclid to Google Ads', async () => {
    const gclid = `Cj0KCQ-e2e-${Date.now()}`
    const { sent, page } = await person()
    await page.goto(`${e2e.pageUrl}/?gclid=${gclid}`)
    await fidget(page)
    // Once the server said this visitor needs no consent (the first /collect answer), the script sends ids.
    const { sid, vid } = await identifiersSent(sent)
    await page.evaluate(() => (window as unknown as { dcutils: { identifyUser: (email: string) => void } }).dcutils.identifyUser('a@b.co'))

    const [user] = await waitFor(() => e2e.sql('select * from identified_users where email = $1', ['a@b.co']), (rows) => rows.length === 1)
    expect(user).toMatchObject({
      site_id: 'shop', email: 'a@b.co', source: 'client_sdk', session_id: sid, visitor_id: vid, ip_country: 'US',
      email_hash: expect.stringMatching(/^[0-9a-f]{64}$/), device_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
    const seen = await visit(sid, (row) => row.page_count >= 1 && row.email === 'a@b.co')
    expect(seen).toMatchObject({ email: 'a@b.co', email_hash: user!.email_hash, is_bot: false, click_ids: expect.objectContaining({ gclid }) })
    expect(sent.filter((r) => r.path === '/identify').map((r) => r.body)).toEqual([
      expect.objectContaining({ v: 1, sid, vid, email: 'a@b.co', via: 'sdk', consent: 'unknown' }),
    ])

    const key = await e2e.privateKey()
    const response = await fetch(`${e2e.dcgate.url}/api/v1/conversions/automation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-dc-key': key },
      body: JSON.stringify({ event: 'Lead', messageId: `lead-${gclid}`, context: { traits: { email: 'a@b.co' } } }),
    })
    expect(response.status).toBe(202)
    const answer = await response.json() as { events: { success: boolean, message: string, identity: { matched: number, enriched: string[] } }[] }
    // Every click id of the visit the browser kept is recovered: the gclid from the URL, and the _fbp value the
    // script makes itself once identifiers are allowed (so the list is ['gclid', 'fbp'], not ['gclid'] alone).
    const kept = Object.keys(seen!.click_ids as Record<string, string>)
    expect(answer.events[0]).toMatchObject({ success: true, message: 'sent to 1 platform', identity: { matched: 1 } })
    expect(answer.events[0]!.identity.enriched).toContain('gclid')
    expect([...answer.events[0]!.identity.enriched].sort()).toEqual([...kept].sort())

    const uploaded = e2e.google.conversions.filter((c) => c.conversion.gclid === gclid)
    expect(uploaded).toHaveLength(1)
    expect(uploaded[0]).toMatchObject({ customerId: '1234567890', conversion: { conversionAction: 'customers/1234567890/conversionActions/222' } })
  })
})

describe('bot verdicts', () => {
  it('marks Chromium\'s default headless visit a bot, with the reasons', async () => {
    const context = await newVisitor(e2e.browser, e2e.dcgate.url, US_IP)
    contexts.push(context)
    const sent = recordRequests(context, e2e.dcgate.url)
    const page = await context.newPage()
    await page.goto(`${e2e.pageUrl}/`)
    expect(await page.evaluate(() => [navigator.userAgent, navigator.webdriver])).toEqual([expect.stringContaining('HeadlessChrome'), true])
    const { sid } = await identifiersSent(sent)
    const row = await visit(sid, (r) => r.page_count >= 1)
    expect(row).toMatchObject({ is_bot: true, user_agent: expect.stringContaining('HeadlessChrome') })
    expect(row!.bot_reasons).toEqual(expect.arrayContaining(['ua:headless', 'webdriver', 'headless:headlesschrome-ua']))
  })

  it('still marks it a bot with a desktop user agent when navigator.webdriver is true', async () => {
    const context = await newVisitor(e2e.browser, e2e.dcgate.url, US_IP, { userAgent: DESKTOP_CHROME })
    contexts.push(context)
    const sent = recordRequests(context, e2e.dcgate.url)
    const page = await context.newPage()
    await page.goto(`${e2e.pageUrl}/`)
    await fidget(page)
    const { sid } = await identifiersSent(sent)
    const row = await visit(sid, (r) => r.page_count >= 1)
    expect(row).toMatchObject({ is_bot: true, bot_reasons: ['webdriver'], user_agent: DESKTOP_CHROME })
  })

  it('does not mark a person a bot: desktop user agent, no webdriver flag, mouse and scroll', async () => {
    const { sent, page } = await person()
    await page.goto(`${e2e.pageUrl}/`)
    const { sid } = await identifiersSent(sent)
    await fidget(page)
    await page.click('#pricing')
    // The page view after the interactions carries them; the newest verdict is the one stored.
    await waitFor(async () => sent.some((r) => r.body.hits?.some((h: { url: string }) => h.url.endsWith('/pricing'))), Boolean)
    const row = await visit(sid, (r) => r.page_count >= 2)
    const lastSignals = sent.filter((r) => r.path === '/collect').at(-1)!.body.signals
    expect(lastSignals).toMatchObject({ webdriver: false, interactions: expect.any(Number) })
    expect(lastSignals.interactions).toBeGreaterThan(0)
    expect(lastSignals.headless).toBeUndefined()
    expect(row).toMatchObject({ is_bot: false, bot_reasons: [], browser: 'Chrome', user_agent: DESKTOP_CHROME })
  })
})
