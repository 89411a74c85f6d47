import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.ts'
import { startSmtp, type TestSmtp } from './smtp.ts'
import { bootDsarApp, confirmByButton, copKey, publicRequest, scanTables, seedPerson, sql, traces, type PersonData } from './support.ts'

// What an erasure leaves behind: after it, no table holds the email, its normalised forms, any of its hashes,
// the phone or the names on that site, while the same person on another site and another person on the same
// site keep everything.
let app: TestApp
let smtp: TestSmtp
const keys: Record<string, string> = {}

beforeAll(async () => {
  smtp = await startSmtp()
  app = await bootDsarApp(smtp)
  keys.shop = await app.createKey('shop')
  keys.other = await app.createKey('other')
})
afterAll(async () => {
  await app?.close()
  await smtp?.close()
})

describe('the erasure, scanned table by table', () => {
  it('public request: after the confirmed erasure no table holds a trace of the email on that site; the same email on another site is intact', async () => {
    // A Gmail address with dots and a +tag: its Google, Microsoft and Reddit spellings and hashes all differ.
    const person: PersonData = { email: 'Ann.Lee+News@Gmail.com', phone: '+44 20 7946 0018', firstName: 'Zebulonia', lastName: 'Quisenberry' }
    const bystander: PersonData = { email: 'bob.stander@example.org', phone: '+1 650 253 0002', firstName: 'Bartholomew', lastName: 'Standerling' }
    await seedPerson(app, 'shop', person, keys.shop!)
    await seedPerson(app, 'other', person, keys.other!)
    await seedPerson(app, 'shop', bystander, keys.shop!)

    const needles = traces(person)
    const onShop = await scanTables(app, 'shop', needles)
    const onOther = await scanTables(app, 'other', needles)
    const bystanderBefore = await scanTables(app, 'shop', traces(bystander))
    expect(onOther.length).toBeGreaterThan(10)
    expect(bystanderBefore.length).toBeGreaterThan(10)
    // The seeded data really is everywhere the erasure must reach.
    expect(onShop.map((t) => `${t.table}.${t.column}`)).toEqual(expect.arrayContaining([
      'identified_users.email', 'identified_users.email_hash', 'visits.email', 'visits.email_hash', 'visits.phone', 'visits.first_name',
      'visits.last_name', 'visits.landing_url', 'page_events.url', 'page_events.props', 'conversions.identity', 'conversions.held_email',
      'conversions.user_id', 'conversions.page_url',
    ]))

    await publicRequest(app, { email: person.email, cop_key: copKey(app, 'shop') })
    const [mail] = await smtp.waitFor(person.email)
    const confirm = mail!.links.find((link) => link.includes('/public/dsar/confirm?token='))!
    expect((await confirmByButton(app, confirm)).status).toBe(303)
    // The request keeps the raw email until the completion mail is out.
    await smtp.waitFor(person.email, 2)
    await expect.poll(async () => (await sql<{ email: string | null }>(app, `select email from deletion_requests where site_id = 'shop'`))[0]?.email).toBeNull()

    expect(await scanTables(app, 'shop', needles)).toEqual([])
    expect(await scanTables(app, 'other', needles)).toEqual(onOther)
    expect(await scanTables(app, 'shop', traces(bystander))).toEqual(bystanderBefore)

    // What stays: anonymous visit and page data, and the conversions' business facts.
    const visits = await sql<Record<string, unknown>>(app, `select page_count, country, is_bot, landing_url, click_ids from visits where site_id = 'shop' and landing_url like '%/welcome' order by started_at`)
    expect(visits).toEqual([
      { page_count: 1, country: 'US', is_bot: false, landing_url: 'https://shop.example/welcome', click_ids: {} },
      { page_count: 1, country: 'US', is_bot: false, landing_url: 'https://shop.example/welcome', click_ids: {} },
    ])
    const purchases = await sql<Record<string, unknown>>(app, `select event, value, currency, state, identity, click_ids, user_id, ip from conversions where site_id = 'shop' and event = 'Purchase' and identity = '{}'::jsonb`)
    expect(purchases).toEqual([{ event: 'Purchase', value: 42, currency: 'EUR', state: 'accepted', identity: {}, click_ids: {}, user_id: null, ip: null }])
    expect(await sql(app, `select count(*)::int as n from conversions where site_id = 'shop' and state = 'held' and event = 'qualified_lead' and identity = '{}'::jsonb`)).toEqual([{ n: 0 }])
  })

  it('private route: the erasure runs during the call, with the same result', async () => {
    const person: PersonData = { email: 'carla.private@example.net', phone: '+1 650 253 0003', firstName: 'Carlotta', lastName: 'Privatova' }
    await seedPerson(app, 'shop', person, keys.shop!)
    await seedPerson(app, 'other', person, keys.other!)
    const needles = traces(person)
    const onOther = await scanTables(app, 'other', needles)
    expect((await scanTables(app, 'shop', needles)).length).toBeGreaterThan(10)

    const response = await app.request('/api/v1/data-deletion', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': keys.shop! }, body: JSON.stringify({ email: ' Carla.Private@Example.NET' }),
    })
    expect(response.status).toBe(200)
    const body = await response.json() as Record<string, unknown>
    expect(body).toEqual({
      success: true, accepted: true, confirmation_code: expect.stringMatching(/^dsr_[A-Za-z0-9_-]{22}$/), session_records_anonymised: 2,
      status_url: `http://localhost:3000/public/dsar/status/${body.confirmation_code as string}`,
    })
    expect(await scanTables(app, 'shop', needles)).toEqual([])
    expect(await scanTables(app, 'other', needles)).toEqual(onOther)
    // Nobody is mailed on the private route.
    expect(smtp.to(person.email)).toEqual([])
  })
})
