/**
 * The consent banner and mapped forms in a real Chromium, for a UK visitor (X-Forwarded-For 81.2.69.142) on a
 * site with `consent.banner: 'eu'`: nothing personal leaves the page or is stored before the choice; after
 * Accept the visit is stored with consent 'granted', and a mapped form identifies the visitor.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BrowserContext, Page } from 'playwright-core'
import { REPO_ROOT } from '../helpers/server-process.ts'
import { identifiersSent, openVisitor, startE2E, UK_IP, waitFor, type E2E, type SentRequest } from './support.ts'

/** Where the banner's screenshot goes (git-ignored). */
const SCREENSHOT = join(REPO_ROOT, '.tmp', 'e2e-consent-banner.png')
const PERSONAL = ['sid', 'vid', 'clickIds', 'device']
const STORAGE_KEYS = ['dc_vid', 'dc_sid', 'dc_cids', 'dc_consent']

let e2e: E2E
const contexts: BrowserContext[] = []

beforeAll(async () => {
  e2e = await startE2E()
})
afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined)
  await e2e?.close()
})

const ukVisitor = () => openVisitor(e2e, contexts, UK_IP)

/** What the page keeps first-party under the script's keys (localStorage and cookies). */
async function kept(page: Page, context: BrowserContext): Promise<string[]> {
  const local = await page.evaluate((keys) => keys.filter((key) => localStorage.getItem(key) !== null), STORAGE_KEYS)
  const cookies = (await context.cookies()).map((c) => c.name).filter((name) => STORAGE_KEYS.includes(name))
  return [...local, ...cookies]
}

const banner = (page: Page) => page.locator('dcgate-consent [role="dialog"]')
const collects = (sent: readonly SentRequest[]) => sent.filter((r) => r.path === '/collect')

describe('an EU/UK visitor', () => {
  it('sees the banner, and nothing personal is sent or kept before consent; after Accept the visit is stored as granted', async () => {
    const { context, sent, page } = await ukVisitor()
    const startedAt = new Date()
    const landing = `${e2e.pageUrl}/?gclid=uk-click-1`
    await page.goto(landing)
    await expect.poll(() => banner(page).isVisible(), { timeout: 10_000 }).toBe(true)
    expect(await banner(page).textContent()).toContain('Do you allow it?')
    expect(await banner(page).locator('button').allTextContents()).toEqual(['Reject', 'Accept'])
    // A call before the choice waits for it; it must not go out now.
    await page.evaluate(() => (window as unknown as { dcutils: { identifyUser: (email: string) => void } }).dcutils.identifyUser('waiting@b.co'))
    await page.mouse.move(300, 200, { steps: 5 })
    await page.click('#pricing') // an SPA view before the choice: also anonymous
    await waitFor(async () => collects(sent).length, (n) => n >= 2)

    mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true })
    await page.screenshot({ path: SCREENSHOT })

    expect(sent.length).toBeGreaterThanOrEqual(2)
    for (const request of sent) {
      expect(request.path).toBe('/collect')
      for (const key of PERSONAL) expect(request.body, `${key} in ${JSON.stringify(request.body)}`).not.toHaveProperty(key)
      expect(request.body.consent).toBe('unknown')
    }
    expect(await kept(page, context)).toEqual([])
    // Counted, without any identifier: the page event has no session and its URL lost the click id.
    const anonymous = await waitFor(() => e2e.sql('select session_id, url from page_events where received_at >= $1 order by occurred_at', [startedAt]), (rows) => rows.length >= 2)
    expect(anonymous, JSON.stringify(anonymous)).toEqual([{ session_id: null, url: `${e2e.pageUrl}/` }, { session_id: null, url: `${e2e.pageUrl}/pricing` }])
    expect(await e2e.sql('select 1 from page_events where url like $1', ['%uk-click-1%'])).toEqual([])
    expect(await e2e.sql('select 1 from visits where landing_url like $1', [`${e2e.pageUrl}/%uk-click-1%`])).toEqual([])
    expect(await e2e.sql('select 1 from identified_users where email = $1', ['waiting@b.co'])).toEqual([])

    await banner(page).getByRole('button', { name: 'Accept' }).click()
    await expect.poll(() => page.locator('dcgate-consent').count()).toBe(0)
    const { sid, vid } = await identifiersSent(sent)
    const row = await waitFor(async () => (await e2e.sql('select * from visits where session_id = $1', [sid]))[0], (r) => r?.page_count >= 1)
    expect(row).toMatchObject({
      visitor_id: vid, country: 'GB', ip_address: UK_IP, consent: 'granted', is_bot: false,
      click_ids: expect.objectContaining({ gclid: 'uk-click-1' }), device_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
    expect(collects(sent).find((r) => r.body.sid)!.body).toMatchObject({ consent: 'granted', clickIds: expect.objectContaining({ gclid: 'uk-click-1' }) })
    expect((await kept(page, context)).sort()).toEqual(['dc_cids', 'dc_consent', 'dc_sid', 'dc_vid', 'dc_vid'])
    expect(await page.evaluate(() => localStorage.getItem('dc_consent'))).toBe('granted')
    // The identifyUser call made before the choice is sent now, with the consent.
    const [user] = await waitFor(() => e2e.sql('select * from identified_users where email = $1', ['waiting@b.co']), (rows) => rows.length === 1)
    expect(user).toMatchObject({ session_id: sid, visitor_id: vid, ip_country: 'GB', source: 'client_sdk' })
    // The page views sent again with identifiers are the same hits: linked to the visit, counted once, landing page kept.
    const linked = await waitFor(() => e2e.sql('select session_id, url from page_events where received_at >= $1 order by occurred_at', [startedAt]), (rows) => rows.every((r) => r.session_id))
    expect(linked).toEqual([{ session_id: sid, url: landing }, { session_id: sid, url: `${e2e.pageUrl}/pricing` }])
    expect(row).toMatchObject({ landing_url: landing })
  })

  it("sees the banner in the browser's language when the site gave it", async () => {
    const { page } = await openVisitor(e2e, contexts, UK_IP, { locale: 'de-DE' })
    await page.goto(`${e2e.pageUrl}/`)
    await expect.poll(() => banner(page).isVisible(), { timeout: 10_000 }).toBe(true)
    expect(await banner(page).textContent()).toContain('Sind Sie einverstanden?')
    expect(await banner(page).locator('button').allTextContents()).toEqual(['Ablehnen', 'Zustimmen'])
  })

  it('after Reject, nothing personal is ever sent or kept, and no visit is stored', async () => {
    const { context, sent, page } = await ukVisitor()
    const startedAt = new Date()
    await page.goto(`${e2e.pageUrl}/?gclid=uk-reject`)
    await expect.poll(() => banner(page).isVisible(), { timeout: 10_000 }).toBe(true)
    await banner(page).getByRole('button', { name: 'Reject' }).click()
    await page.evaluate(() => (window as unknown as { dcutils: { identifyUser: (email: string) => void } }).dcutils.identifyUser('rejected@b.co'))
    await page.click('#pricing')
    await waitFor(async () => collects(sent).some((r) => r.body.consent === 'denied'), Boolean)
    await page.waitForTimeout(300)
    expect(sent.map((r) => r.path)).toEqual(['/collect', '/collect'])
    for (const request of sent) for (const key of PERSONAL) expect(request.body).not.toHaveProperty(key)
    expect(await kept(page, context)).toEqual(['dc_consent'])
    expect(await page.evaluate(() => localStorage.getItem('dc_consent'))).toBe('denied')
    // Both views are counted (the SPA one has the landing URL as referrer), neither with a session.
    const events = await waitFor(() => e2e.sql('select session_id from page_events where received_at >= $1', [startedAt]), (rows) => rows.length >= 2)
    expect(events).toEqual([{ session_id: null }, { session_id: null }])
    expect(await e2e.sql('select 1 from page_events where url like $1 or referrer like $1', ['%uk-reject%'])).toEqual([])
    expect(await e2e.sql('select 1 from visits where referrer like $1 or landing_url like $1', ['%uk-reject%'])).toEqual([])
    expect(await e2e.sql('select 1 from identified_users where email = $1', ['rejected@b.co'])).toEqual([])
  })

  it('a mapped form is not read before consent; after it, a submit identifies the visitor', async () => {
    const { sent, page } = await ukVisitor()
    await page.goto(`${e2e.pageUrl}/`)
    await expect.poll(() => banner(page).isVisible(), { timeout: 10_000 }).toBe(true)
    await page.fill('#email', 'before-consent@b.co')
    await page.fill('input[name=first_name]', 'Early')
    await Promise.all([page.waitForURL(`${e2e.pageUrl}/thanks`), page.click('button[type=submit]')])
    await expect.poll(() => banner(page).isVisible(), { timeout: 10_000 }).toBe(true)
    expect(sent.filter((r) => r.path === '/identify')).toEqual([])
    expect(await e2e.sql('select 1 from identified_users where email = $1', ['before-consent@b.co'])).toEqual([])

    await banner(page).getByRole('button', { name: 'Accept' }).click()
    const { sid, vid } = await identifiersSent(sent)
    await page.goto(`${e2e.pageUrl}/`)
    await expect(page.locator('dcgate-consent').count()).resolves.toBe(0) // the stored choice skips the banner
    await page.fill('#email', ' Ann.Form@B.co ')
    await page.fill('input[name=first_name]', 'Ann')
    await Promise.all([page.waitForURL(`${e2e.pageUrl}/thanks`), page.click('button[type=submit]')])

    const [user] = await waitFor(() => e2e.sql('select * from identified_users where email = $1', ['ann.form@b.co']), (rows) => rows.length === 1)
    expect(user).toMatchObject({ source: 'form', session_id: sid, visitor_id: vid, ip_country: 'GB' })
    const row = await waitFor(async () => (await e2e.sql('select * from visits where session_id = $1', [sid]))[0], (r) => r?.email === 'ann.form@b.co')
    expect(row).toMatchObject({ email: 'ann.form@b.co', first_name: 'Ann', consent: 'granted', country: 'GB' })
    expect(sent.filter((r) => r.path === '/identify').map((r) => r.body)).toEqual([
      expect.objectContaining({ sid, vid, email: 'Ann.Form@B.co', via: 'form', fields: { first_name: 'Ann' }, consent: 'granted' }),
    ])
    expect(await e2e.sql('select 1 from identified_users where email = $1', ['before-consent@b.co'])).toEqual([])
  })
})
