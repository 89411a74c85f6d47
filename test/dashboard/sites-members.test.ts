import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import dashboard from '../../plugins/dashboard/index.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { signIn } from './pages-client.ts'
import { uniqueEmail } from './support.ts'

const member = uniqueEmail('editor', 'shop.example')
let app: TestApp

beforeAll(async () => {
  app = await bootTestApp({ server: { trustProxy: true }, plugins: ['intake', 'dashboard'], dashboard: { membersMayEdit: true } } as never,
    { builtInPlugins: { ...builtInPlugins, dashboard } })
}, 300_000)
afterAll(() => app?.close())

describe('dashboard.membersMayEdit: true', () => {
  it('a member edits the settings of their dashboard-made site, audited under their address; they still make no site', async () => {
    const operator = await signIn(app)
    await operator.get('/dashboard/new-site')
    expect((await operator.post('/dashboard/new-site', { id: 'theirs', name: 'Theirs', members: member })).status).toBe(303)

    const owner = await signIn(app, member)
    const page = await owner.get('/dashboard/sites/theirs/settings')
    expect(page.text).toContain('name="part" value="site"')
    const saved = await owner.post('/dashboard/sites/theirs/settings', { part: 'site', name: 'Theirs, renamed', domains: 'theirs.example', members: member, events: '' })
    expect(saved.status).toBe(303)
    expect(app.dcgate.context.sites.byId('theirs')).toMatchObject({ name: 'Theirs, renamed', config: { domains: ['theirs.example'] } })
    const audit = await owner.get('/dashboard/sites/theirs/audit')
    expect(audit.text).toContain('edited site')
    expect(audit.text).toContain(member)
    expect((await owner.get('/dashboard/new-site')).status).toBe(403)
    // The demo site comes from the config file: read-only for them too.
    expect((await owner.get('/dashboard/sites/demo/settings')).status).toBe(403)
  })
})
