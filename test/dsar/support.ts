/**
 * What the data deletion tests share: dcgate with capture, intake, release and dsar, mailing to a real in-process
 * SMTP server; a person's data put in through the real routes (tracking script requests, identification,
 * server-side conversions, a held conversion); and a scan of every text and JSON column of every table.
 */
import { expect } from 'vitest'
import type { ConfigInput } from '../../core/config/schema.ts'
import { hashIdentity, sha256Hex } from '../../core/identity/hash.ts'
import { normalizeEmail, normalizeEmailForGoogle, normalizeEmailForMicrosoft, normalizeEmailForReddit } from '../../core/identity/normalize.ts'
import { bootTestApp, type TestApp, type TestAppOptions } from '../helpers/app.ts'
import type { TestSmtp } from './smtp.ts'

export const US_IP = '73.162.0.1'
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const HELD_EVENT = { key: 'qualified_lead', name: 'Qualified lead', sendsAs: 'Lead', release: 'when_qualified' } as const

/** Sites: shop and other (deletion on), closed (deletion switched off). */
export function bootDsarApp(smtp: TestSmtp | undefined, input: Partial<ConfigInput> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  return bootTestApp({
    plugins: ['capture', 'intake', 'release', 'dsar'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    delivery: { workerIntervalMs: 25 },
    mail: { ...(smtp ? { smtp: smtp.url } : {}), from: 'Privacy <privacy@shop.example>' },
    sites: [
      { id: 'shop', name: 'Shop', domains: ['shop.example'], events: [HELD_EVENT] },
      { id: 'other', name: 'Other shop', domains: ['other.example'], events: [HELD_EVENT] },
      { id: 'closed', name: 'No deletions', deletion: { enabled: false } },
    ],
    ...input,
  }, options)
}

export const copKey = (app: TestApp, siteId: string) => app.dcgate.context.sites.byId(siteId)!.copKey

export function sql<T extends object>(app: TestApp, text: string, params: unknown[] = []): Promise<T[]> {
  return app.dcgate.context.prepared<T>({ name: '', text, reusePlan: false }, params)
}

/**
 * A visitor address no earlier run used: with Redis (CI's second pass) the per-IP counts outlive the test run, so
 * fixed addresses would reach the limit after a few runs within the hour.
 */
export function randomIp(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(3))
  return `10.${bytes[0]}.${bytes[1]}.${bytes[2]}`
}

export function publicRequest(app: TestApp, body: unknown, ip = randomIp(), headers: Record<string, string> = {}): Promise<Response> {
  return app.request('/public/data-deletion/request', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip, ...headers },
    body: JSON.stringify(body),
  })
}

/** The path and query of a link, to request it in process. */
export const pathOf = (link: string) => { const url = new URL(link); return `${url.pathname}${url.search}` }

/** The confirmation page's form: where its button posts, and the token it carries. */
export async function confirmForm(app: TestApp, link: string): Promise<{ action: string, token: string }> {
  const page = await app.request(pathOf(link))
  expect(page.status).toBe(200)
  const html = await page.text()
  const action = /<form method="post" action="([^"]+)">/.exec(html)?.[1]
  const token = /<input type="hidden" name="token" value="([A-Za-z0-9_-]+)">/.exec(html)?.[1]
  expect(action, 'the page has a form that posts').toBeDefined()
  expect(token, 'the form carries the token').toBeDefined()
  return { action: action!, token: token! }
}

/** Presses the confirmation page's button: a form POST of the token, as a browser sends it. */
export function postConfirm(app: TestApp, form: { action: string, token: string }): Promise<Response> {
  return app.request(form.action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: form.token }).toString() })
}

/** What a person does with the emailed link: opens the page (which erases nothing), then presses its button. */
export async function confirmByButton(app: TestApp, link: string): Promise<Response> {
  return postConfirm(app, await confirmForm(app, link))
}

export interface PersonData {
  email: string
  phone: string
  firstName: string
  lastName: string
}

let seq = 0
const id = (prefix: string) => `${prefix}${String(++seq).padStart(10, '0')}`

/**
 * The person on a site, through the routes that store it: two browser visits identified by the email (the first
 * landing from a mailing with the email and a gclid in the URL, an event carrying the email), an anonymous visit
 * whose event properties hold the email, three server-side conversions (plain traits with the email as user id,
 * the email pre-hashed, the Gmail spelling of the same mailbox) and a held conversion.
 */
export async function seedPerson(app: TestApp, siteId: string, person: PersonData, apiKey: string): Promise<{ sessions: string[] }> {
  const key = copKey(app, siteId)
  const sessions: string[] = []
  for (let visit = 0; visit < 2; visit++) {
    const sid = id('sess')
    const vid = id('visitor')
    sessions.push(sid)
    const landing = `https://shop.example/welcome?gclid=G-${sid}&utm_source=mail&email=${encodeURIComponent(person.email)}`
    expect((await capture(app, `/collect?cop_key=${key}`, {
      v: 1, sid, vid, consent: 'granted', clickIds: { gclid: `G-${sid}` }, device: device(sid),
      hits: [
        { t: 'pageview', ts: Date.now(), url: landing, title: 'Welcome' },
        { t: 'event', ts: Date.now(), url: landing, name: 'newsletter_open', props: { address: person.email } },
      ],
    })).status).toBeLessThan(300)
    expect((await capture(app, `/identify?cop_key=${key}`, {
      v: 1, sid, vid, email: person.email, via: 'form', consent: 'granted', device: device(sid),
      fields: { phone: person.phone, first_name: person.firstName, last_name: person.lastName },
    })).status).toBe(202)
  }
  const anonymous = id('sess')
  expect((await capture(app, `/collect?cop_key=${key}`, {
    v: 1, sid: anonymous, vid: id('visitor'), consent: 'granted',
    hits: [{ t: 'event', ts: Date.now(), url: 'https://shop.example/contact', name: 'contact_form', props: { note: `reply to ${person.email}` } }],
  })).status).toBeLessThan(300)

  const normalized = normalizeEmail(person.email)!
  const traits = { email: person.email, phone: person.phone, first_name: person.firstName, last_name: person.lastName }
  await convert(app, apiKey, { event: 'Purchase', messageId: id('order'), userId: person.email, properties: { value: 42, currency: 'EUR', order_id: id('A') },
    context: { traits, identifiers: { gclid: `G-${sessions[0]}` }, ip: US_IP, userAgent: CHROME, page: { url: `https://shop.example/thanks?email=${encodeURIComponent(person.email)}` } } })
  await convert(app, apiKey, { event: 'Lead', messageId: id('lead'), context: { traits: { email: sha256Hex(normalized) } } })
  await convert(app, apiKey, { event: 'Lead', messageId: id('lead'), context: { traits: { email: normalizeEmailForGoogle(normalized) } } })
  await convert(app, apiKey, { event: HELD_EVENT.key, messageId: id('held'), context: { traits: { email: person.email }, identifiers: { gclid: 'held-click' } } })

  // The capture writer stores hits in batches: wait until both identified visits have their page view.
  await expect.poll(async () => (await sql<{ n: number }>(app, `select count(*)::int as n from visits where site_id = $1 and session_id = any($2::text[]) and page_count >= 1`, [siteId, sessions]))[0]!.n, { timeout: 10_000 }).toBe(2)
  await expect.poll(async () => (await sql<{ n: number }>(app, `select count(*)::int as n from page_events where site_id = $1 and session_id = $2`, [siteId, anonymous]))[0]!.n, { timeout: 10_000 }).toBe(1)
  return { sessions }
}

function capture(app: TestApp, path: string, body: unknown): Promise<Response> {
  return app.request(path, { method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': US_IP }, body: JSON.stringify(body) })
}

async function convert(app: TestApp, apiKey: string, body: unknown): Promise<void> {
  const response = await app.request('/api/v1/conversions/automation', { method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': apiKey }, body: JSON.stringify(body) })
  expect(response.status, await response.clone().text()).toBeLessThan(300)
}

function device(seed: string) {
  const hash = sha256Hex(`device-${seed}`)
  return { hash, short: hash.slice(0, 12), confidence: 0.9, version: 1 }
}

/**
 * Everything that could point at the person, lower-case: the email as typed, normalised and URL-encoded, the
 * Google, Microsoft and Reddit spellings, the SHA-256 of each, and the phone and names with their hashes.
 */
export function traces(person: PersonData): string[] {
  const normalized = normalizeEmail(person.email)!
  const forms = [person.email.toLowerCase(), normalized, encodeURIComponent(normalized).toLowerCase(),
    normalizeEmailForGoogle(normalized), normalizeEmailForMicrosoft(normalized), normalizeEmailForReddit(normalized)]
  const identity = hashIdentity({ email: person.email, phone: person.phone, first_name: person.firstName, last_name: person.lastName })
  expect(identity.phoneE164, 'the test phone must be valid').toBeDefined()
  return [...new Set([
    ...forms, ...forms.map(sha256Hex), ...Object.values(identity),
    person.phone.toLowerCase(), person.firstName.toLowerCase(), person.lastName.toLowerCase(),
  ])]
}

export interface Trace { table: string, column: string, rows: number }

/**
 * Every text, varchar and JSON column of every table, searched for each needle (case-insensitive). Tables with a
 * site_id column are searched on that site only; the others in full.
 */
export async function scanTables(app: TestApp, siteId: string, needles: string[]): Promise<Trace[]> {
  const columns = await sql<{ table_name: string, column_name: string, has_site: boolean }>(app, `
    select c.table_name, c.column_name, exists (
      select 1 from information_schema.columns s where s.table_schema = c.table_schema and s.table_name = c.table_name and s.column_name = 'site_id'
    ) as has_site
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
    where c.table_schema = current_schema() and c.data_type in ('text', 'character varying', 'character', 'json', 'jsonb')
    order by c.table_name, c.column_name`)
  expect(columns.length).toBeGreaterThan(40)
  const found: Trace[] = []
  for (const { table_name: table, column_name: column, has_site: hasSite } of columns) {
    const [row] = await sql<{ n: number }>(app,
      `select count(*)::int as n from "${table}" where ${hasSite ? 'site_id = $2 and' : '$2::text is not null and'}
         exists (select 1 from unnest($1::text[]) as needle where strpos(lower("${column}"::text), needle) > 0)`,
      [needles, siteId])
    if (row!.n > 0) found.push({ table, column, rows: row!.n })
  }
  return found
}
