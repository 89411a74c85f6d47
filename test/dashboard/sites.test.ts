import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveConfig } from '../../core/config/load.ts'
import { sitesCommand } from '../../core/cli/commands/sites.ts'
import dashboard from '../../plugins/dashboard/index.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { testPlatform, startFakeTestPlatform } from '../delivery/test-platform.ts'
import type { FakeServer } from '../fakes/server.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { sharedDatabase } from '../helpers/database.ts'
import { loaderMessage } from '../helpers/loader-message.ts'
import { signIn, until } from './pages-client.ts'
import { uniqueEmail } from './support.ts'

const SECRET = 'a-server-secret-every-instance-shares-0123456789'
const member = uniqueEmail('owner', 'shop.example')
const plugins = { ...builtInPlugins, dashboard }

/** Two instances on one database, as behind a load balancer: the sites are edited on `a`. */
let database: Awaited<ReturnType<typeof sharedDatabase>>
let fake: FakeServer
let a: TestApp
let b: TestApp

function boot(membersMayEdit: boolean) {
  return bootTestApp({
    server: { trustProxy: true, secret: SECRET },
    plugins: ['intake', 'dashboard'],
    delivery: { workerIntervalMs: 25 },
    dashboard: { membersMayEdit },
    sites: [{ id: 'shop', name: 'Shop', members: [member], destinations: { testads: { baseUrl: fake.url, token: 'good' } } }],
  } as never, { databaseUrl: database.url, adapters: [testPlatform], builtInPlugins: plugins })
}

beforeAll(async () => {
  database = await sharedDatabase()
  fake = await startFakeTestPlatform()
  a = await boot(false)
  b = await boot(false)
}, 300_000)
afterAll(async () => {
  await a?.close()
  await b?.close()
  await fake?.close()
  await database?.drop()
})


function postConversion(app: TestApp, key: string, messageId: string) {
  return app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({ event: 'Lead', messageId, context: { traits: { email: `${messageId}@example.com` } } }),
  })
}

describe('sites made in the dashboard', () => {
  it('the operator makes a site with a destination; it takes a conversion at once, and the other instance within seconds', async () => {
    const operator = await signIn(a)
    const home = await operator.get('/dashboard')
    expect(home.text).toContain('New site')
    await operator.get('/dashboard/new-site')
    const created = await operator.post('/dashboard/new-site', {
      id: 'fresh', name: 'Fresh shop', domains: 'fresh.example', members: 'Someone@Fresh.example', events: 'demo_booked | Demo booked | Schedule',
    })
    expect(created.status).toBe(303)
    expect(created.headers.get('location')).toBe('/dashboard/sites/fresh/settings')
    const settings = await operator.get('/dashboard/sites/fresh/settings')
    expect(settings.text).toContain('Site “Fresh shop” created')
    expect(settings.text).toContain('Someone@Fresh.example')
    const saved = await operator.post('/dashboard/sites/fresh/settings', { part: 'destinations', name: 'testads', options: JSON.stringify({ baseUrl: fake.url, token: 'good' }) })
    expect(saved.status).toBe(303)

    const key = await a.createKey('fresh', 'server')
    const before = fake.requests.length
    const answer = await postConversion(a, key, `fresh-${Date.now()}`)
    expect(answer.status).toBe(202)
    expect(await answer.json()).toMatchObject({ events: [{ success: true }] })
    await until(() => fake.requests.length > before)

    // The other instance has not been told: it reads the change from the database.
    await until(() => b.dcgate.context.registry.forSite('fresh', 'ad-platform').length === 1, 10_000)
    const elsewhere = await postConversion(b, key, `fresh-b-${Date.now()}`)
    expect(elsewhere.status).toBe(202)
    expect(b.dcgate.context.sites.byId('fresh')).toMatchObject({ name: 'Fresh shop', origin: 'dashboard', config: { domains: ['fresh.example'] } })

    const audit = await operator.get('/dashboard/sites/fresh/audit')
    expect(audit.text).toContain('created site')
    expect(audit.text).toContain('set destination')
    // The token is sealed at rest.
    const rows = await a.dcgate.database.orm.em.getConnection().execute(`select settings::text, sealed from managed_sites where id = 'fresh'`)
    expect(JSON.stringify(rows)).not.toContain('"good"')
  }, 60_000)

  it('an invalid field gets the config loader\'s message beside it, and nothing is stored', async () => {
    const operator = await signIn(a)
    await operator.get('/dashboard/new-site')
    const answer = await operator.post('/dashboard/new-site', { id: 'broken', name: 'Broken', members: 'not-an-email' })
    expect(answer.status).toBe(400)
    const [message] = loaderMessage({ id: 'broken', name: 'Broken', members: ['not-an-email'] })
    expect(message).toBe('members[0]: must be an email address such as owner@shop.example')
    expect(answer.text).toMatch(new RegExp(`id="field-members"[^>]*aria-invalid="true"[\\s\\S]*<p class="field-error" id="field-members-error">${message!.replace(/[[\]]/g, '\\$&')}</p>`))
    expect(a.dcgate.context.sites.byId('broken')).toBeUndefined()
    const long = await operator.post('/dashboard/new-site', { id: 'broken', name: 'x'.repeat(5000) })
    expect(long.status).toBe(400)
    expect(long.text).toContain('name: must be at most 200 characters')

    const options = await operator.post('/dashboard/sites/fresh/settings', { part: 'destinations', name: 'testads', options: JSON.stringify({ baseUrl: 'not a url' }) })
    expect(options.status).toBe(400)
    expect(options.text).toContain('destinations.testads.token: is required')
  })

  it('a config-file site is read-only: "managed in the config file", and a posted form changes nothing', async () => {
    const operator = await signIn(a)
    const page = await operator.get('/dashboard/sites/shop/settings')
    expect(page.text).toContain('managed in the config file')
    expect(page.text).not.toContain('name="part" value="site"')
    const refused = await operator.post('/dashboard/sites/shop/settings', { part: 'site', name: 'Renamed' })
    expect(refused.status).toBe(409)
    expect(a.dcgate.context.sites.byId('shop')?.name).toBe('Shop')
  })

  it('a member may not edit when dashboard.membersMayEdit is false (the default): 403', async () => {
    const operator = await signIn(a)
    await operator.get('/dashboard/new-site')
    expect((await operator.post('/dashboard/new-site', { id: 'members-site', name: 'Members', members: member })).status).toBe(303)
    const owner = await signIn(a, member)
    const page = await owner.get('/dashboard/sites/members-site/settings')
    expect(page.status).toBe(200)
    expect(page.text).not.toContain('name="part" value="site"')
    const refused = await owner.post('/dashboard/sites/members-site/settings', { part: 'site', name: 'Mine now' })
    expect(refused.status).toBe(403)
    expect((await owner.get('/dashboard/new-site')).status).toBe(403)
    expect(a.dcgate.context.sites.byId('members-site')?.name).toBe('Members')
  })

  it('the Connect hooks set and remove a destination of a dashboard site, and refuse a config-file site', async () => {
    const hooks = a.dcgate.hooks
    await hooks.callHook('dashboard:destination-connected', { siteId: 'members-site', platform: 'testads', options: { baseUrl: fake.url, token: 'good' }, actor: member })
    expect(a.dcgate.context.registry.forSite('members-site', 'ad-platform').map((c) => c.definition.name)).toEqual(['testads'])
    await expect(hooks.callHook('dashboard:destination-connected', { siteId: 'members-site', platform: 'testads', options: { token: 'good' }, actor: member }))
      .rejects.toThrow('destinations.testads.baseUrl: is required')
    await expect(hooks.callHook('dashboard:destination-connected', { siteId: 'shop', platform: 'testads', options: { baseUrl: fake.url, token: 'good' }, actor: member }))
      .rejects.toThrow('managed in the config file')
    await hooks.callHook('dashboard:destination-disconnected', { siteId: 'members-site', platform: 'testads', actor: member })
    expect(a.dcgate.context.registry.forSite('members-site', 'ad-platform')).toEqual([])
    const operator = await signIn(a)
    const audit = await operator.get('/dashboard/sites/members-site/audit')
    expect(audit.text).toContain('removed destination')
    expect(audit.text).toContain(member)
  })

  it('`dcgate sites export` prints a dashboard-made site as config the loader takes, and refuses a config-file site', async () => {
    const client = { url: '', request: async <T>(method: string, path: string) => {
      const response = await a.admin(method, path)
      if (!response.ok) throw new Error(((await response.json()) as { message: string }).message)
      return (await response.json()) as T
    } }
    let printed = ''
    await sitesCommand(client, { json: false, result: (_data, human) => { printed = human() } }, ['export', 'fresh'])
    expect(printed).toContain('id: \'fresh\'')
    expect(printed).toContain('destinations: {\n    testads: {')
    const site = new Function(`return ${printed.replace(/^\/\/.*\n/gm, '').replace(/,\s*$/, '')}`)() as Record<string, unknown>
    const config = resolveConfig({ sites: [site] }, {}, plugins)
    expect(config.sites[0]).toMatchObject({ id: 'fresh', name: 'Fresh shop', copKey: a.dcgate.context.sites.byId('fresh')!.copKey, events: [{ key: 'demo_booked', sendsAs: 'Schedule' }] })
    await expect(sitesCommand(client, { json: false, result: () => {} }, ['export', 'shop'])).rejects.toThrow('managed in the config file')
  })
})
