import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { migrations } from '../../core/db/migrations/index.ts'
import { bootTestApp } from '../helpers/app.ts'
import { freshDatabase, onPostgres, sharedDatabase } from '../helpers/database.ts'

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
const applied = (app: Awaited<ReturnType<typeof bootTestApp>>) =>
  app.dcgate.database.orm.em.getConnection().execute<{ name: string }[]>('select name from mikro_orm_migrations order by id')

describe(`migrations on ${onPostgres ? 'PostgreSQL' : 'the embedded database'}`, () => {
  const cleanup: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const fn of cleanup) await fn()
  })

  it('start applies every committed migration, and the entities match them exactly', async () => {
    const app = await bootTestApp()
    cleanup.push(app.close)
    expect((await applied(app)).map((r) => r.name)).toEqual(migrations.map((m) => m.name))
    expect(await app.dcgate.database.orm.getMigrator().getPendingMigrations()).toEqual([])
    // An entity changed without a new migration shows up here as SQL.
    expect(await app.dcgate.database.orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false })).toBe('')
  })

  // Only PostgreSQL can host two instances: PGlite has one backend session, so its advisory locks are
  // re-entrant across connections, and in production an embedded database belongs to one process.
  it.skipIf(!onPostgres)('two instances starting at once on one database both boot and migrate once', async () => {
    const database = await sharedDatabase()
    cleanup.push(database.drop)
    const [a, b] = await Promise.all([bootTestApp({}, { databaseUrl: database.url }), bootTestApp({}, { databaseUrl: database.url })])
    cleanup.push(a.close, b.close)
    expect((await applied(a)).map((r) => r.name)).toEqual(migrations.map((m) => m.name))
    const keyA = await a.createKey('demo', 'from-a')
    expect((await b.request('/api/v1/export/health', { headers: { 'x-dc-key': keyA } })).status).toBe(200)
  })

  it('`dcgate migrate` applies pending migrations, then reports the database up to date', async () => {
    const database = await freshDatabase()
    cleanup.push(database.drop)
    const dataDir = mkdtempSync(join(tmpdir(), 'dcgate-migrate-'))
    cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }))
    // No server runs on this port, so on the embedded database the CLI opens the data dir itself.
    const { DATABASE_URL: _ignored, ...inherited } = process.env
    const env = { ...inherited, DCGATE_DATA_DIR: dataDir, PORT: '1', ...(database.url ? { DATABASE_URL: database.url } : {}) }
    const migrate = async () => JSON.parse((await run(process.execPath, ['bin/dcgate.mjs', 'migrate', '--json'], { cwd: root, env })).stdout) as { applied: string[] }
    expect((await migrate()).applied).toEqual(migrations.map((m) => m.name))
    expect((await migrate()).applied).toEqual([])
  })
})
