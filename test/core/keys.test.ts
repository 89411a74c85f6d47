import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, health, type TestApp } from '../helpers/app.ts'

let app: TestApp
beforeAll(async () => {
  app = await bootTestApp({ sites: [{ id: 'demo', name: 'Demo' }, { id: 'other', name: 'Other' }] })
})
afterAll(() => app?.close())

const rows = (sql: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute(sql, params)

describe('private keys', () => {
  it('creates a dcp_ key of 32+ random bytes, stores only its SHA-256, and shows it in full once', async () => {
    const response = await app.admin('POST', '/sites/demo/keys', { name: 'zapier' })
    expect(response.status).toBe(201)
    const created = await response.json() as { key: string, prefix: string, name: string, created_at: string, last_used_at: null }
    expect(created.key).toMatch(/^dcp_[A-Za-z0-9_-]{43}$/)
    expect(Buffer.from(created.key.slice(4), 'base64url')).toHaveLength(32)
    expect(created).toMatchObject({ name: 'zapier', prefix: created.key.slice(0, 12), last_used_at: null })

    const stored = await rows('select * from api_keys where prefix = ?', [created.prefix])
    expect(stored).toHaveLength(1)
    expect(JSON.stringify(stored)).not.toContain(created.key)
    expect(stored[0]!.hash).toMatch(/^[0-9a-f]{64}$/)

    const listed = await (await app.admin('GET', '/sites/demo/keys')).json() as { keys: Record<string, unknown>[] }
    const mine = listed.keys.find((k) => k.prefix === created.prefix)!
    expect(mine).toEqual({ id: expect.any(String), name: 'zapier', prefix: created.prefix, created_at: created.created_at, last_used_at: null })
    expect(JSON.stringify(listed)).not.toContain(created.key)
  })

  it('authenticates the site of the key and records when it was last used', async () => {
    const demoKey = await app.createKey('demo', 'a')
    const otherKey = await app.createKey('other', 'b')
    const demo = await health(app, demoKey)
    expect(demo.status).toBe(200)
    expect(await demo.json()).toEqual({ success: true, app_id: 'demo', identified_user_count: 0 })
    expect(await (await health(app, otherKey)).json()).toMatchObject({ app_id: 'other' })

    await expect.poll(async () => (await rows("select last_used_at from api_keys where prefix = ?", [demoKey.slice(0, 12)]))[0]!.last_used_at)
      .not.toBeNull()
  })

  it('answers the spec bodies for a missing, unknown or malformed key', async () => {
    const missing = await health(app)
    expect(missing.status).toBe(401)
    expect(await missing.json()).toEqual({ message: 'Missing x-dc-key header' })
    for (const key of ['dcp_' + 'x'.repeat(43), 'not-a-key', 'cop_abc']) {
      const wrong = await health(app, key)
      expect(wrong.status).toBe(401)
      expect(await wrong.json()).toEqual({ message: 'Invalid API key' })
    }
  })

  it('allows any number of keys per site; deleting one stops it at once and leaves the others working', async () => {
    const keys = await Promise.all([1, 2, 3].map((n) => app.createKey('demo', `k${n}`)))
    for (const key of keys) expect((await health(app, key)).status).toBe(200)

    const deleted = await app.admin('DELETE', `/sites/demo/keys/${keys[0]!.slice(0, 12)}`)
    expect(deleted.status).toBe(200)
    expect(await deleted.json()).toMatchObject({ deleted: { prefix: keys[0]!.slice(0, 12), name: 'k1' } })

    expect((await health(app, keys[0])).status).toBe(401)
    expect((await health(app, keys[1])).status).toBe(200)
    expect((await health(app, keys[2])).status).toBe(200)
    expect(await rows('select 1 from api_keys where prefix = ?', [keys[0]!.slice(0, 12)])).toHaveLength(0)
  })

  it('deletes only within the given site, and refuses an unknown or ambiguous prefix', async () => {
    const key = await app.createKey('demo', 'mine')
    const wrongSite = await app.admin('DELETE', `/sites/other/keys/${key.slice(0, 12)}`)
    expect(wrongSite.status).toBe(404)
    expect((await health(app, key)).status).toBe(200)

    expect((await app.admin('DELETE', '/sites/demo/keys/dcp_zzzzzzzz')).status).toBe(404)
    expect((await app.admin('DELETE', '/sites/demo/keys/dcp_')).status).toBe(400)
    expect((await app.admin('DELETE', '/sites/nope/keys/dcp_zzzzzzzz')).status).toBe(404)
  })

  it('rejects a key request without a name, naming the field', async () => {
    const response = await app.admin('POST', '/sites/demo/keys', {})
    expect(response.status).toBe(400)
    expect((await response.json() as { message: string }).message).toContain('name')
  })
})
