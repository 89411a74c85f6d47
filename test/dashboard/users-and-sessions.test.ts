import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import dashboard from '../../plugins/dashboard/index.ts'
import { uniqueEmail, type Browser } from './support.ts'
import { rows, signIn } from './pages-client.ts'

// The Identified users and Sessions pages: newest first, 50 a page, verdicts shown, personal data masked or left out.
let app: TestApp
const MEMBER = uniqueEmail('owner', 'other.example')
let operator: Browser

beforeAll(async () => {
  app = await bootTestApp({
    // The browser stand-in signs in from an address of its own per run (X-Forwarded-For): sign-in limits are shared on Redis.
    server: { trustProxy: true },
    plugins: ['dashboard'],
    sites: [{ id: 'shop', name: 'Shop' }, { id: 'other', name: 'Other shop', members: [MEMBER] }],
  }, { builtInPlugins: { ...builtInPlugins, dashboard } })
  await sql(`insert into identified_users (id, site_id, email, email_hash, source, ip_country, ip_is_vpn, email_risk_score, email_risk_label, is_disposable, identified_at)
    select gen_random_uuid(), 'shop', 'person' || n || '@example.com', md5(n::text) || md5(n::text), 'form', 'DE', n = 1, 80, 'high', true,
      now() - make_interval(mins => n) from generate_series(1, 60) n`)
  await sql(`insert into identified_users (id, site_id, email, email_hash, source) values (gen_random_uuid(), 'other', 'someone@other.example', repeat('a', 64), 'client_sdk')`)
  await sql(`insert into visits (id, site_id, session_id, started_at, ended_at, duration_ms, page_count, country, platform, landing_url, referrer,
      is_bot, bot_reasons, is_vpn, is_proxy, is_tor, ip_address, user_agent)
    select gen_random_uuid(), 'shop', 'sess-' || n, now() - make_interval(mins => n), now(), 95000, 3, 'FR', 'desktop',
      'https://shop.example/landing?email=visitor' || n || '@example.com', 'https://search.example/q?x=1',
      n = 2, case when n = 2 then '["headless"]'::jsonb else '[]'::jsonb end, n = 3, n = 3, n = 4, '198.51.100.' || n, 'Mozilla/5.0 Secret' || n
    from generate_series(1, 55) n`)
  operator = await signIn(app)
}, 60_000)
afterAll(async () => {
  await app?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

const olderLink = (html: string, slug: string) => new RegExp(`<a href="/dashboard/sites/shop/${slug}(\\?before=[^"]+)">Older</a>`).exec(html)?.[1]

describe('Identified users page', () => {
  it('lists the site\'s identified users newest first with masked emails and their verdicts, 50 a page', async () => {
    const first = await operator.get('/dashboard/sites/shop/users')
    expect(first.status).toBe(200)
    const table = rows(first.text)
    expect(table).toHaveLength(50)
    expect(table[0]!.slice(1)).toEqual([expect.stringMatching(/^p\*\*\*\d@e\*\*\*e\.com ·[0-9a-f]{4}$/), 'form', 'high (80), disposable', 'DE', 'yes', expect.stringContaining('UTC')])
    expect(first.text).not.toContain('person1@example.com')
    // Fifty addresses that mask alike ("p***1@e***e.com" for person1, person11…) stay fifty different rows.
    expect(new Set(table.map((cells) => cells[1])).size).toBe(50)
    expect(first.text).not.toContain('someone')
    const second = await operator.get(`/dashboard/sites/shop/users${olderLink(first.text, 'users')}`)
    expect(rows(second.text)).toHaveLength(10)
    expect(olderLink(second.text, 'users')).toBeUndefined()
    expect(second.text).toContain('>Newest</a>')
  })

  it('refuses a hand-made page position with 400', async () => {
    expect((await operator.get('/dashboard/sites/shop/users?before=2026-01-01')).status).toBe(400)
  })
})

describe('Sessions page', () => {
  it('lists visits newest first with bot and VPN/proxy/Tor verdicts, without IP, user agent or query strings', async () => {
    const { status, text } = await operator.get('/dashboard/sites/shop/sessions')
    expect(status).toBe(200)
    for (const header of ['Started', 'Bot', 'VPN / proxy / Tor']) expect(text).toContain(`<th scope="col">${header}</th>`)
    const table = rows(text)
    expect(table).toHaveLength(50)
    expect(table.slice(0, 4).map((cells) => cells.slice(1))).toEqual([
      ['1 min 35 s', '3', 'shop.example/landing', 'search.example/q', 'FR', 'desktop', 'no', 'none'],
      ['1 min 35 s', '3', 'shop.example/landing', 'search.example/q', 'FR', 'desktop', 'yes (headless)', 'none'],
      ['1 min 35 s', '3', 'shop.example/landing', 'search.example/q', 'FR', 'desktop', 'no', 'VPN, proxy'],
      ['1 min 35 s', '3', 'shop.example/landing', 'search.example/q', 'FR', 'desktop', 'no', 'Tor'],
    ])
    expect(text).not.toContain('198.51.100.')
    expect(text).not.toContain('Secret')
    expect(text).not.toContain('visitor1@example.com')
    const older = await operator.get(`/dashboard/sites/shop/sessions${olderLink(text, 'sessions')}`)
    expect(rows(older.text)).toHaveLength(5)
  })

  it('a member of another site gets 403 on both pages, and sees only their own site\'s rows', async () => {
    const member = await signIn(app, MEMBER)
    expect((await member.get('/dashboard/sites/shop/users')).status).toBe(403)
    expect((await member.get('/dashboard/sites/shop/sessions')).status).toBe(403)
    const own = await member.get('/dashboard/sites/other/users')
    expect(rows(own.text).map((cells) => cells[1])).toEqual([expect.stringMatching(/^s\*\*\*e@o\*\*\*r\.example ·[0-9a-f]{4}$/)])
    expect((await member.get('/dashboard/sites/other/sessions')).text).toContain('No visit recorded yet.')
  })
})
