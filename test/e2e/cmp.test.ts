/**
 * Issue 27 in a real Chromium: a shop's own consent tool — the IAB's TCF CMP API with TC strings from the IAB's
 * encoder, Google Consent Mode through gtag, the IAB's GPP CMP API — is followed without glue code, for a UK visitor
 * on a `banner: 'eu'` site: dcgate's banner never shows, nothing identifying leaves the page before the tool allows
 * it, a change of mind applies from the next hit, and the purposes reach Google on a later server conversion.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tcString } from '../consent/tcf-fixtures.ts'
import { identifiersSent, openVisitor, startE2E, UK_IP, US_IP, waitFor, type E2E, type SentRequest } from './support.ts'

const PERSONAL = ['sid', 'vid', 'clickIds', 'device']
let e2e: E2E
let pages: Server
let pagesUrl: string
const contexts: BrowserContext[] = []

beforeAll(async () => {
  const [started, cmpBundle] = await Promise.all([startE2E(), build({
    entryPoints: [fileURLToPath(new URL('./cmp-page.ts', import.meta.url))], bundle: true, write: false, format: 'iife', platform: 'browser', target: 'es2019', logLevel: 'silent',
  }).then((result) => result.outputFiles[0]!.text)])
  e2e = started
  // The shop's pages: the consent tool first (synchronous, as CMPs ask), then dcgate's tag exactly as documented.
  pages = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    if (url.pathname === '/cmp.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(cmpBundle)
    const kind = url.searchParams.get('cmp') ?? ''
    const gtag = kind === 'consent-mode'
      ? `<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments)}
gtag('consent', 'default', { ad_storage: 'denied', analytics_storage: 'denied', ad_user_data: 'denied', ad_personalization: 'denied' });</script>`
      // A consent tool that arrives late: the IAB stub and CMP injected two seconds after the page has loaded.
      : kind === 'tcf-late' ? `<script>window.cmpKind = 'tcf'; addEventListener('load', () => setTimeout(() => document.head.appendChild(Object.assign(document.createElement('script'), { src: '/cmp.js' })), 2000))</script>`
        : `<script>window.cmpKind = ${JSON.stringify(kind)}</script><script src="/cmp.js"></script>`
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>${gtag}
<script id="dcgate-script" async src="${e2e.dcgate.url}/script?cop_key=${e2e.copKey}"></script></head>
<body><h1>Shop</h1><a id="next" href="/next">Next</a></body></html>`)
  })
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve))
  pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`
})
afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined)
  pages?.closeAllConnections()
  await new Promise((resolve) => pages?.close(resolve))
  await e2e?.close()
})

const collects = (sent: readonly SentRequest[]) => sent.filter((r) => r.path === '/collect')
const anonymous = (sent: readonly SentRequest[]) => collects(sent).every((r) => PERSONAL.every((key) => !(key in r.body)))
const bannerCount = (page: Page) => page.locator('dcgate-consent').count()

/** A Purchase from the shop's server for this visit, as the automation route takes it. */
async function purchase(messageId: string, sessionId: string): Promise<void> {
  const key = await e2e.privateKey()
  const response = await fetch(`${e2e.dcgate.url}/api/v1/conversions/automation`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({ event: 'Purchase', messageId, properties: { value: 30, currency: 'EUR' }, context: { identifiers: { dc_session_id: sessionId, gclid: `g-${messageId}` }, traits: { email: `${messageId}@example.com` } } }),
  })
  expect(response.status).toBe(202)
}
const googleConsent = async (messageId: string) => (await waitFor(async () => e2e.google.conversions.find((c) => JSON.stringify(c).includes(messageId)), (c) => c !== undefined))?.event?.consent

describe('a TCF consent tool (the IAB\'s CMP API)', () => {
  it('refusing purpose 1: no banner, no identifier; granting 1, 3, 4, 7 and Google: identifiers from the next hit, and a later conversion reaches Google with consent granted', async () => {
    const { sent, page } = await openVisitor(e2e, contexts, UK_IP)
    await page.goto(`${pagesUrl}/?cmp=tcf`)
    await waitFor(async () => collects(sent).length, (n) => n >= 1)
    await page.evaluate((tc) => (window as any).cmp.tcf(tc), tcString([2, 3, 4, 7], [755]))
    await page.evaluate(() => (window as any).dcutils.track('browse'))
    await waitFor(async () => collects(sent).length, (n) => n >= 2)
    expect(await bannerCount(page)).toBe(0)
    expect(anonymous(sent), JSON.stringify(sent)).toBe(true)
    expect(await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('dc_')))).toEqual([])

    // The visitor changes their mind in the CMP: the next hit carries identifiers and the TC string.
    await page.evaluate((tc) => (window as any).cmp.tcf(tc), tcString([1, 3, 4, 7], [755]))
    const { sid } = await identifiersSent(sent)
    expect(collects(sent).find((r) => r.body.sid)!.body.cmp).toMatchObject({ source: 'tcf', tcString: expect.any(String) })
    expect(await bannerCount(page)).toBe(0)
    const visit = await waitFor(async () => (await e2e.sql('select consent, consent_purposes from visits where session_id = $1', [sid]))[0], (row) => row !== undefined)
    expect(visit).toMatchObject({ consent: 'granted', consent_purposes: { source: 'tcf', measurement: 'granted', advertising: 'granted', ad_user_data: 'granted', ad_personalization: 'granted' } })

    await purchase('e2e-tcf-1', sid)
    expect(await googleConsent('e2e-tcf-1')).toEqual({ adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_GRANTED' })
  })
})

describe('a TCF consent tool that loads after the page', () => {
  it('is found once it appears: dcgate\'s banner goes, identifiers wait for purpose 1, and Google\'s Additional Consent string reaches the visit', async () => {
    const { sent, page } = await openVisitor(e2e, contexts, UK_IP)
    await page.goto(`${pagesUrl}/?cmp=tcf-late`)
    // No consent tool yet: an EU visitor is asked by dcgate's banner, as on any site without one.
    await waitFor(async () => bannerCount(page), (n) => n === 1)
    // The CMP arrives (its dialog shown): dcgate follows it, and its own banner goes.
    await waitFor(async () => page.evaluate(() => typeof (window as any).cmp?.tcf), (t) => t === 'function')
    // Looked for again at doubling intervals: found within about eight seconds of the page's start.
    await waitFor(async () => bannerCount(page), (n) => n === 0, 30_000)
    expect(anonymous(sent)).toBe(true)
    // Meta (Google ATP 89) shown without consent, Snap (2572) consented to.
    await page.evaluate(([tc, ac]) => (window as any).cmp.tcf(tc, ac), [tcString([1, 3, 4, 7], [755, 804, 1126]), '2~2572~dv.89'])
    await page.evaluate(() => (window as any).dcutils.track('browse'))
    const { sid } = await identifiersSent(sent)
    expect(collects(sent).find((r) => r.body.sid)!.body.cmp).toMatchObject({ source: 'tcf', tcString: expect.any(String), addtlConsent: '2~2572~dv.89' })
    const visit = await waitFor(async () => (await e2e.sql('select consent_purposes from visits where session_id = $1', [sid]))[0], (row) => row !== undefined)
    expect(visit!.consent_purposes).toMatchObject({ source: 'tcf', measurement: 'granted', advertising: 'granted', vendors_denied: ['meta'] })
  })
})

describe('a GPP-only consent tool in the EU (its TCF section, id 2)', () => {
  it('purpose 1 refused: no identifier; granted: identifiers from the next hit, the visit\'s purposes read from the section', async () => {
    const { sent, page } = await openVisitor(e2e, contexts, UK_IP)
    await page.goto(`${pagesUrl}/?cmp=gpp-eu`)
    await waitFor(async () => collects(sent).length, (n) => n >= 1)
    await page.evaluate(() => (window as any).cmp.gpp([3, 4, 7]))
    await page.evaluate(() => (window as any).dcutils.track('browse'))
    await waitFor(async () => collects(sent).length, (n) => n >= 2)
    expect(await bannerCount(page)).toBe(0)
    expect(anonymous(sent)).toBe(true)
    await page.evaluate(() => (window as any).cmp.gpp([1, 3, 4, 7]))
    await page.evaluate(() => (window as any).dcutils.track('browse-again'))
    const { sid } = await identifiersSent(sent)
    const visit = await waitFor(async () => (await e2e.sql('select consent_purposes from visits where session_id = $1', [sid]))[0], (row) => row !== undefined)
    expect(visit!.consent_purposes).toMatchObject({ source: 'gpp', measurement: 'granted', advertising: 'granted', ad_personalization: 'granted', us_opt_out: false })
  })
})

describe('Google Consent Mode (gtag)', () => {
  it('default denied: no banner, no identifier; an update with ad_user_data denied reaches Google as adUserData DENIED; a refusal later is honoured on the next hit', async () => {
    const { sent, page } = await openVisitor(e2e, contexts, UK_IP)
    await page.goto(`${pagesUrl}/?cmp=consent-mode`)
    await waitFor(async () => collects(sent).length, (n) => n >= 1)
    expect(await bannerCount(page)).toBe(0)
    expect(anonymous(sent)).toBe(true)
    await page.evaluate(() => (window as any).gtag('consent', 'update', { analytics_storage: 'granted', ad_storage: 'granted', ad_user_data: 'denied', ad_personalization: 'granted' }))
    await page.evaluate(() => (window as any).dcutils.track('browse'))
    const { sid } = await identifiersSent(sent)
    const visit = await waitFor(async () => (await e2e.sql('select consent_purposes from visits where session_id = $1', [sid]))[0], (row) => row !== undefined)
    expect(visit!.consent_purposes).toEqual({ source: 'consent-mode', measurement: 'granted', advertising: 'granted', ad_user_data: 'denied', ad_personalization: 'granted' })
    await purchase('e2e-cm-1', sid)
    expect(await googleConsent('e2e-cm-1')).toEqual({ adUserData: 'CONSENT_DENIED', adPersonalization: 'CONSENT_GRANTED' })

    // And back: analytics refused mid-visit, the next hit goes without identifiers and nothing stays on the device.
    await page.evaluate(() => (window as any).gtag('consent', 'update', { analytics_storage: 'denied' }))
    const before = collects(sent).length
    await page.evaluate(() => (window as any).dcutils.track('after-refusal'))
    const later = await waitFor(async () => collects(sent).slice(before).find((r) => r.body.hits?.some((h: { name?: string }) => h.name === 'after-refusal')), (r) => r !== undefined)
    expect(later!.body).not.toHaveProperty('sid')
    expect(later!.body).not.toHaveProperty('vid')
    expect(await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('dc_')))).toEqual([])
  })
})

describe('a GPP consent tool (the IAB\'s GPP CMP API)', () => {
  it('a US visitor\'s national-section opt-out of sale reaches the visit as a US opt-out; no banner', async () => {
    const { sent, page } = await openVisitor(e2e, contexts, US_IP)
    await page.goto(`${pagesUrl}/?cmp=gpp`)
    await page.evaluate(() => (window as any).cmp.gpp(1))
    await page.evaluate(() => (window as any).dcutils.track('browse'))
    const { sid } = await identifiersSent(sent)
    expect(await bannerCount(page)).toBe(0)
    const visit = await waitFor(async () => (await e2e.sql('select consent_purposes from visits where session_id = $1', [sid]))[0], (row) => row?.consent_purposes?.us_opt_out !== undefined)
    expect(visit!.consent_purposes).toEqual({ source: 'gpp', us_opt_out: true })
  })
})
