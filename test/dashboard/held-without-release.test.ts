import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import type { Browser } from './support.ts'
import { signIn } from './pages-client.ts'

// A server that runs the dashboard without the release plugin: nothing handles a held lead, and the page says so.
let app: TestApp
let operator: Browser

beforeAll(async () => {
  app = await bootTestApp({ server: { trustProxy: true }, plugins: ['dashboard'], sites: [{ id: 'shop', name: 'Shop' }] }, { builtInPlugins })
  operator = await signIn(app)
}, 60_000)
afterAll(async () => {
  await app?.close()
})

describe('Held leads without the release plugin', () => {
  it('an action tells the viewer that the release plugin does not run, and changes nothing', async () => {
    const sql = app.dcgate.database.orm.em.getConnection()
    const [lead] = await sql.execute<{ id: string }[]>(`insert into conversions (id, site_id, message_id, source, event, occurred_at, channel, confirmation, state, held_email)
      values (gen_random_uuid(), 'shop', 'held-1', 'automation', 'qualified_lead', now(), 'web', 'confirmed', 'held', 'ann@example.com') returning id`)
    expect((await operator.get('/dashboard/sites/shop/held')).text).toMatch(/a\*\*\*@e\*\*\*e\.com ·[0-9a-f]{4}/)
    expect((await operator.post('/dashboard/sites/shop/held/release', { id: lead!.id })).status).toBe(303)
    expect((await operator.get('/dashboard/sites/shop/held')).text).toContain('handled by the release plugin, which this server does not run')
    expect(await sql.execute(`select state from conversions where id = ?`, [lead!.id])).toEqual([{ state: 'held' }])
  })
})
