import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { bootTestApp, health, type TestAppOptions } from '../helpers/app.ts'
import { sharedDatabase } from '../helpers/database.ts'

interface SiteDetail { id: string, cop_key: string, release_secret: string, script_tag: string, status: string }

/** Boots, runs fn, closes: a restart is two of these on the same database. */
async function withApp<T>(sites: unknown[], options: TestAppOptions, fn: (app: Awaited<ReturnType<typeof bootTestApp>>) => Promise<T>): Promise<T> {
  const app = await bootTestApp({ sites: sites as never }, options)
  try {
    return await fn(app)
  }
  finally {
    await app.close()
  }
}

describe('sites', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'dcgate-sites-'))
  let database: Awaited<ReturnType<typeof sharedDatabase>> | undefined
  afterAll(async () => {
    await database?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('generates cop_key and release secret once and keeps them across restarts; removed sites stop answering but keep their data', async () => {
    // On the default run this restarts the real embedded database persisted in dataDir; on CI's
    // PostgreSQL pass the two boots share one fresh database.
    database = process.env.DATABASE_URL ? await sharedDatabase() : undefined
    const options: TestAppOptions = { dataDir, persistent: true, databaseUrl: database?.url }
    const two = [{ id: 'demo', name: 'Demo' }, { id: 'old', name: 'Old' }]

    const first = await withApp(two, options, async (app) => {
      const demo = await (await app.admin('GET', '/sites/demo')).json() as SiteDetail
      expect(demo.cop_key).toMatch(/^cop_[A-Za-z0-9_-]{20}$/)
      expect(demo.release_secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(demo.script_tag).toBe(`<script id="dcgate-script" async src="http://localhost:3000/script?cop_key=${demo.cop_key}"></script>`)
      const old = await (await app.admin('GET', '/sites/old')).json() as SiteDetail
      expect(old.cop_key).not.toBe(demo.cop_key)
      return { demo, oldKey: await app.createKey('old') }
    })

    await withApp([{ id: 'demo', name: 'Demo renamed', status: 'paused' }], options, async (app) => {
      const demo = await (await app.admin('GET', '/sites/demo')).json() as SiteDetail
      expect(demo).toMatchObject({ cop_key: first.demo.cop_key, release_secret: first.demo.release_secret, status: 'paused' })
      expect((await app.admin('GET', '/sites/old')).status).toBe(404)
      expect((await health(app, first.oldKey)).status).toBe(401)
      const [row] = await app.dcgate.database.orm.em.getConnection().execute(`select removed_at from sites where id = 'old'`)
      expect(row!.removed_at).not.toBeNull()
      const keys = await app.dcgate.database.orm.em.getConnection().execute(`select 1 from api_keys where site_id = 'old'`)
      expect(keys).toHaveLength(1)
    })

    await withApp(two, options, async (app) => {
      const old = await (await app.admin('GET', '/sites/old')).json() as SiteDetail
      expect(old.status).toBe('active')
      expect((await health(app, first.oldKey)).status).toBe(200)
    })
  })

  it('uses a cop_key and release secret pinned in the config', async () => {
    const copKey = 'cop_pinnedPinnedPinned1'
    const releaseSecret = 'pinned-release-secret-0123456789abcdef'
    await withApp([{ id: 'demo', name: 'Demo', copKey, releaseSecret }], {}, async (app) => {
      const demo = await (await app.admin('GET', '/sites/demo')).json() as SiteDetail
      expect(demo).toMatchObject({ cop_key: copKey, release_secret: releaseSecret })
      expect(app.dcgate.context.sites.byCopKey(copKey)?.id).toBe('demo')
    })
  })

  it('lists the configured sites with the admin API', async () => {
    await withApp([{ id: 'a', name: 'A' }, { id: 'b', name: 'B', plan: 'business' }], {}, async (app) => {
      const { sites } = await (await app.admin('GET', '/sites')).json() as { sites: { id: string, plan: string }[] }
      expect(sites.map((s) => [s.id, s.plan])).toEqual([['a', 'free'], ['b', 'business']])
    })
  })
})
