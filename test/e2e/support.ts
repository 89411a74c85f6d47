/**
 * What the browser tests share: dcgate started for real (`dcgate start` in a child process, on a loopback port,
 * plugins capture + intake) on a database the test can read, a fake Google Ads as the site's destination, a tiny
 * page server on another loopback port serving pages with the script tag exactly as documented, and Debian's
 * Chromium driven by playwright-core (see ../../../shared/ci-services.md).
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import pg from 'pg'
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Request } from 'playwright-core'
import { startFakeGoogleAds, type FakeGoogleAds } from '../fakes/google-ads.ts'
import { sharedDatabase } from '../helpers/database.ts'
import { sleep, startServerProcess, type ServerProcess } from '../helpers/server-process.ts'

/** From the bundled geo data (see test/capture/collect.test.ts): a US residential line (Comcast) and a UK address. */
export const US_IP = '73.162.0.1'
export const UK_IP = '81.2.69.142'
/** A desktop Chrome as people run it (Chromium's headless default says HeadlessChrome). */
export const DESKTOP_CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36'
export const SITE_ID = 'shop'
export const WORKER_SECRET = 'e2e-worker-secret-0123456789abcdef'
const ADMIN_TOKEN = `e2e-admin-${randomBytes(12).toString('hex')}`
const COP_KEY = `cop_e2e_${randomBytes(8).toString('hex')}`

/** The flags ci-services.md prescribes for Debian's Chromium. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export interface E2E {
  dcgate: ServerProcess
  google: FakeGoogleAds
  copKey: string
  /** http://127.0.0.1:<port> of the page server. */
  pageUrl: string
  /**
   * A browser as automation leaves it (navigator.webdriver true, HeadlessChrome in the user agent unless a
   * context sets another).
   */
  browser: Browser
  /**
   * A browser that looks like one a person runs: navigator.webdriver false (`--disable-blink-features=AutomationControlled`);
   * give its contexts DESKTOP_CHROME as user agent.
   */
  humanBrowser: Browser
  sql: <T = Record<string, any>>(text: string, params?: unknown[]) => Promise<T[]>
  /** A private key of the site, made through the admin API. */
  privateKey: () => Promise<string>
  close: () => Promise<void>
}

/** Everything started in parallel where it can be; close() stops it all, in reverse. */
export async function startE2E(): Promise<E2E> {
  const closers: (() => Promise<unknown>)[] = []
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => undefined)
  }
  try {
    const [google, database, pages] = await Promise.all([startFakeGoogleAds(), sharedDatabase(), startPageServer()])
    closers.push(() => google.close(), () => database.drop(), () => pages.close())
    const pool = new pg.Pool({ connectionString: database.url, max: 2 })
    closers.push(() => pool.end())
    const dcgate = await startServerProcess({ config: dcgateConfig(google), env: { DATABASE_URL: database.url } })
    closers.push(() => dcgate.close())
    pages.configure(`${dcgate.url}/script?cop_key=${COP_KEY}`)
    const [browser, humanBrowser] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS }),
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, '--disable-blink-features=AutomationControlled'] }),
    ])
    closers.push(() => browser.close(), () => humanBrowser.close())
    const sql = async <T>(text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as T[]
    return {
      dcgate, google, copKey: COP_KEY, pageUrl: pages.url, browser, humanBrowser, sql,
      async privateKey() {
        const response = await fetch(`${dcgate.url}/admin/api/sites/${SITE_ID}/keys`, {
          method: 'POST',
          headers: { 'authorization': `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `e2e-${randomBytes(3).toString('hex')}` }),
        })
        if (response.status !== 201) throw new Error(`creating a key failed: ${response.status} ${await response.text()}`)
        return ((await response.json()) as { key: string }).key
      },
      close,
    }
  }
  catch (error) {
    await close()
    throw error
  }
}

function dcgateConfig(google: FakeGoogleAds): string {
  const config = {
    server: { host: '127.0.0.1', trustProxy: true },
    admin: { token: ADMIN_TOKEN },
    plugins: ['capture', 'intake'],
    capture: { flushIntervalMs: 50 },
    delivery: { workerIntervalMs: 50 },
    sites: [{
      id: SITE_ID,
      name: 'E2E shop',
      // The page server's host: the script's requests come with Origin http://127.0.0.1:<page port>.
      domains: ['127.0.0.1'],
      copKey: COP_KEY,
      consent: {
        banner: 'eu',
        // English first, as the site's own language; a German browser gets German (consent.test.ts).
        text: {
          en: { message: 'This site measures visits and ad results with first-party cookies and a device identifier. Do you allow it?', accept: 'Accept', reject: 'Reject' },
          de: { message: 'Diese Website misst Besuche und Werbeerfolge. Sind Sie einverstanden?', accept: 'Zustimmen', reject: 'Ablehnen' },
        },
      },
      capture: { workerSecret: WORKER_SECRET, forms: [{ selector: '#signup', emailField: 'email', firstNameField: 'first_name' }] },
      destinations: {
        google_ads: {
          customerId: '123-456-7890', clientId: google.credentials.clientId, clientSecret: google.credentials.clientSecret,
          refreshToken: google.credentials.refreshToken, conversionActions: { Purchase: '111', Lead: '222', CompleteRegistration: '333', Schedule: '444' },
          baseUrl: google.url, oauthUrl: google.oauthUrl,
        },
      },
    }],
  }
  return `export default ${JSON.stringify(config, null, 2)}\n`
}

/**
 * The site's pages. `/` (and any other path) is the shop page: the tag as documented (with the optional stub
 * before it), a link that navigates SPA-style with history.pushState to /pricing, and the mapped #signup form,
 * which posts to /thanks.
 */
async function startPageServer(): Promise<{ url: string, configure: (scriptSrc: string) => void, close: () => Promise<void> }> {
  let scriptSrc = ''
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname
      if (path === '/favicon.ico') {
        res.writeHead(204).end()
        return
      }
      const thanks = req.method === 'POST' && path === '/thanks'
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      res.end(thanks ? page('Thanks', '<h1>Thanks for signing up</h1>', scriptSrc) : page('E2E shop', SHOP_BODY, scriptSrc))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    configure: (src) => void (scriptSrc = src),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

const SHOP_BODY = `<h1>E2E shop</h1>
<p>A page for the browser tests of the tracking script. It has enough text to look like a page, a link that
changes the URL without loading a new document, and a newsletter form.</p>
<p><a id="pricing" href="/pricing">See pricing</a></p>
<form id="signup" method="post" action="/thanks">
  <label>Email <input id="email" name="email" type="email"></label>
  <label>First name <input name="first_name"></label>
  <button type="submit">Sign up</button>
</form>
<script>
  document.getElementById('pricing').addEventListener('click', function (event) {
    event.preventDefault();
    history.pushState({}, '', '/pricing');
    document.title = 'Pricing';
    document.querySelector('h1').textContent = 'Pricing';
  });
</script>`

function page(title: string, body: string, scriptSrc: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<script>
  window.dcutils = window.dcutils || { q: [] };
  ['track', 'identifyUser', 'consent'].forEach(function (m) {
    dcutils[m] = dcutils[m] || function () { dcutils.q.push([m].concat([].slice.call(arguments))) };
  });
</script>
<script id="dcgate-script" async src="${scriptSrc}"></script>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}label{display:block;margin:.5rem 0}</style>
</head>
<body>
${body}
</body>
</html>
`
}

/**
 * A context whose requests to dcgate carry X-Forwarded-For: the visitor's address as dcgate (trustProxy) sees it.
 * Added by interception, after the browser's CORS checks: set through extraHTTPHeaders, the header would count
 * as one the page added, turning the script's simple text/plain POSTs into preflighted ones that the capture
 * routes (rightly) refuse.
 */
export async function newVisitor(browser: Browser, dcgateUrl: string, ip: string, options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext(options)
  await context.route((url) => url.href.startsWith(dcgateUrl), (route) => route.continue({ headers: { ...route.request().headers(), 'x-forwarded-for': ip } }))
  return context
}

/** A request the script sent to dcgate, with its parsed JSON body. */
export interface SentRequest { path: string, body: Record<string, any> }

/** Records every POST the page sends to dcgate's /collect and /identify. */
/**
 * A visitor whose browser looks like a person's (desktop Chrome user agent, navigator.webdriver false), from `ip`,
 * with the requests it sends to dcgate recorded. The context is added to `contexts` for closing after the file.
 */
export async function openVisitor(e2e: E2E, contexts: BrowserContext[], ip: string, options: BrowserContextOptions = {}) {
  const context = await newVisitor(e2e.humanBrowser, e2e.dcgate.url, ip, { userAgent: DESKTOP_CHROME, ...options })
  contexts.push(context)
  const sent = recordRequests(context, e2e.dcgate.url)
  return { context, sent, page: await context.newPage() }
}

export function recordRequests(context: BrowserContext, dcgateUrl: string): SentRequest[] {
  const sent: SentRequest[] = []
  context.on('request', (request: Request) => {
    if (request.method() !== 'POST' || !request.url().startsWith(dcgateUrl)) return
    const text = request.postData()
    sent.push({ path: new URL(request.url()).pathname, body: text ? JSON.parse(text) as Record<string, any> : {} })
  })
  return sent
}

/** Polls `read` until `done` holds (every 50 ms, up to `timeoutMs`); returns the last value either way. */
export async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let value = await read()
  while (!done(value) && Date.now() < deadline) {
    await sleep(50)
    value = await read()
  }
  return value
}

/** The sid and vid of the first /collect that carried identifiers (waits for one). */
export async function identifiersSent(sent: readonly SentRequest[], timeoutMs = 10_000): Promise<{ sid: string, vid: string }> {
  const found = await waitFor(async () => sent.find((r) => r.path === '/collect' && r.body.sid), (r) => r !== undefined, timeoutMs)
  if (!found) throw new Error(`no /collect with a sid within ${timeoutMs} ms; sent: ${JSON.stringify(sent)}`)
  return { sid: found.body.sid as string, vid: found.body.vid as string }
}
