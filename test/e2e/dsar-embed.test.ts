/**
 * The drop-in deletion form in a real Chromium against a real dcgate process (issue 8, done-when): the form renders
 * where its tag sits, a request from it sends a real SMTP mail, the mail's link opens a page whose button completes
 * the erasure and lands on the status page, the proof shows `completed` with a masked email, and a second request within 24 hours answers
 * the same and sends no mail. dcgate mails to an SMTP server in this process (test/dsar/smtp.ts).
 */
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import pg from 'pg'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sharedDatabase, type TestDatabase } from '../helpers/database.ts'
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts'
import { startSmtp, type TestSmtp } from '../dsar/smtp.ts'
import { CHROMIUM_ARGS, US_IP } from './support.ts'

const SITE = 'shop'
const COP_KEY = `cop_dsar_${randomBytes(8).toString('hex')}`
const EMAIL = 'Erin.Embed@Example.com'
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

let smtp: TestSmtp
let database: TestDatabase & { url: string }
let pool: pg.Pool
let dcgate: ServerProcess
let pages: { url: string, close: () => Promise<void> }
let browser: Browser
/** What the form said to the first request. */
let firstAnswer = ''

beforeAll(async () => {
  ;[smtp, database] = await Promise.all([startSmtp(), sharedDatabase()])
  pool = new pg.Pool({ connectionString: database.url, max: 2 })
  dcgate = await startServerProcess({ config: config(smtp.url), env: { DATABASE_URL: database.url } })
  pages = await startPageServer(dcgate.url)
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
})
afterAll(async () => {
  await browser?.close().catch(() => undefined)
  await pages?.close()
  await dcgate?.close()
  await pool?.end()
  await database?.drop()
  await smtp?.close()
})

const sql = async <T = Record<string, any>>(text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as T[]

describe('the drop-in deletion form in Chromium', () => {
  it('renders an accessible email box where its tag sits; a request mails a link whose page and button complete the erasure; the proof shows completed with a masked email', async () => {
    await identify(EMAIL)
    expect(await sql('select email from identified_users where site_id = $1', [SITE])).toEqual([{ email: 'erin.embed@example.com' }])

    const page = await browser.newPage()
    const failed: string[] = []
    page.on('requestfailed', (request) => failed.push(request.url()))
    await page.goto(`${pages.url}/privacy`)
    const email = page.getByLabel('Email address')
    await email.waitFor()
    // Right after its script tag, before the paragraph that follows it in the page.
    expect(await page.evaluate(() => {
      const form = document.querySelector('form.dcgate-dsar')!
      return [form.previousElementSibling?.tagName, form.nextElementSibling?.id, form.parentElement?.id]
    })).toEqual(['SCRIPT', 'after-form', 'privacy'])
    expect(await email.getAttribute('type')).toBe('email')
    expect(await email.getAttribute('autocomplete')).toBe('email')

    // An invalid address is refused in the page, with a message the status region announces.
    await email.fill('not-an-email')
    await page.getByRole('button', { name: 'Request deletion' }).click()
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Enter a valid email address.')
    expect(await email.getAttribute('aria-invalid')).toBe('true')

    firstAnswer = await submit(page, EMAIL)
    expect(firstAnswer).toContain('We have sent a confirmation link')

    const [mail] = await smtp.waitFor(EMAIL)
    expect(mail!.subject).toBe('Confirm the deletion of your data at E2E shop')
    const confirm = mail!.links.find((link) => link.includes('/public/dsar/confirm?token='))!
    const status = mail!.links.find((link) => link.includes('/public/dsar/status/'))!
    const code = decodeURIComponent(status.split('/').pop()!)

    // The person opens the link: a page with the confirmation code and one button; opening it erases nothing.
    const landing = await browser.newPage()
    await landing.goto(confirm)
    expect(await landing.getByRole('heading', { level: 1 }).textContent()).toBe('Delete your data at E2E shop?')
    expect(await landing.content()).toContain(code)
    expect(await landing.locator('script').count()).toBe(0)
    expect(await sql('select count(*)::int as n from identified_users where site_id = $1', [SITE])).toEqual([{ n: 1 }])
    // The button posts the token; the erasure runs and the browser lands on the status page.
    await Promise.all([landing.waitForURL(status), landing.getByRole('button', { name: 'Delete my data' }).click()])
    expect(landing.url()).toBe(status)
    expect(await landing.getByRole('heading', { level: 1 }).textContent()).toBe('Data deletion request at E2E shop')
    expect(await landing.locator('.status').textContent()).toBe('Completed: the data has been deleted.')
    expect(await landing.content()).toContain('e***@e***.com')
    expect(await landing.locator('script').count()).toBe(0)

    const proof = await (await fetch(`${dcgate.url}/public/dsar/proof/${code}`)).json() as Record<string, any>
    expect(proof).toMatchObject({ status: 'completed', maskedEmail: 'e***@e***.com', completed_at: expect.any(String), session_records_anonymised: 1 })
    expect(JSON.stringify(proof)).not.toMatch(/erin/i)
    expect(await sql('select count(*)::int as n from identified_users where site_id = $1', [SITE])).toEqual([{ n: 0 }])
    expect(await sql('select email, email_hash, ip_address from visits where site_id = $1', [SITE])).toEqual([{ email: null, email_hash: null, ip_address: null }])

    // The completion mail; a later click shows the status and erases nothing again.
    await smtp.waitFor(EMAIL, 2)
    const proofNow = async () => (await fetch(`${dcgate.url}/public/dsar/proof/${code}`)).json() as Promise<{ completion_email_sent_at: string | null, merchant_log: { event: string }[] }>
    await expect.poll(async () => (await proofNow()).completion_email_sent_at).not.toBeNull()
    const log = (await proofNow()).merchant_log
    await landing.goto(confirm)
    expect(landing.url()).toBe(status)
    expect((await proofNow()).merchant_log).toEqual(log)
    expect(log.filter((entry) => entry.event === 'erasure_started')).toHaveLength(1)
    expect(failed).toEqual([])
  })

  it('a second request within 24 hours answers the same and sends no mail', async () => {
    const page = await browser.newPage()
    await page.goto(`${pages.url}/privacy`)
    expect(await submit(page, EMAIL.toLowerCase())).toBe(firstAnswer)
    // Mails leave in order: once a later request's mail has arrived, a second one for EMAIL would have too.
    await submit(page, 'barrier@example.com')
    await smtp.waitFor('barrier@example.com')
    expect(smtp.to(EMAIL).map((m) => m.subject)).toEqual(['Confirm the deletion of your data at E2E shop', 'Your data at E2E shop has been deleted'])
    expect(await sql(`select count(*)::int as n from deletion_requests where site_id = $1 and masked_email = 'e***@e***.com'`, [SITE])).toEqual([{ n: 1 }])
  })
})

/** Types the address into the form, sends it, and returns what the status region says once the answer is in. */
async function submit(page: Page, address: string): Promise<string> {
  await page.getByLabel('Email address').fill(address)
  await page.getByRole('button', { name: 'Request deletion' }).click()
  await expect.poll(() => page.locator('form.dcgate-dsar[aria-busy]').count(), { timeout: 10_000 }).toBe(0)
  return (await page.getByRole('status').textContent()) ?? ''
}

/** A visitor identified on the site, as the tracking script does it (so there is data to erase). */
async function identify(address: string): Promise<void> {
  const ids = { sid: `sess${randomBytes(6).toString('hex')}`, vid: `vis${randomBytes(6).toString('hex')}` }
  const response = await fetch(`${dcgate.url}/identify?cop_key=${COP_KEY}`, {
    method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8', 'x-forwarded-for': US_IP },
    body: JSON.stringify({ v: 1, ...ids, email: address, via: 'sdk', consent: 'granted' }),
  })
  expect(response.status).toBe(202)
}

function config(smtpUrl: string): string {
  return `export default ${JSON.stringify({
    server: { host: '127.0.0.1', trustProxy: true },
    plugins: ['capture', 'intake', 'release', 'dsar'],
    mail: { smtp: smtpUrl, from: 'E2E shop privacy <privacy@shop.example>' },
    sites: [{ id: SITE, name: 'E2E shop', domains: ['127.0.0.1'], copKey: COP_KEY, deletion: { enabled: true } }],
  }, null, 2)}\n`
}

/** The site's privacy page with the drop-in tag exactly as documented, between two paragraphs; no other script. */
async function startPageServer(dcgateUrl: string): Promise<{ url: string, close: () => Promise<void> }> {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Privacy</title></head>
<body>
<main id="privacy">
<h1>Your privacy</h1>
<p id="before-form">Ask us to delete your data:</p>
<script src="${dcgateUrl}/dsar-embed.js" data-cop-key="${COP_KEY}"></script>
<p id="after-form">We answer every request within a month.</p>
</main>
</body>
</html>
`
  const server: Server = createServer((req, res) => {
    req.resume()
    if (req.url === '/favicon.ico') {
      res.writeHead(204).end()
      return
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
