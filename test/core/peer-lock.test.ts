import pg from 'pg'
import { createConsola, type LogObject } from 'consola'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { onPostgres, onRedis, sharedDatabase, type TestDatabase } from '../helpers/database.ts'
import { BootError } from '../../core/errors.ts'

// Two instances on one PostgreSQL where either keeps its caches in memory would each trust a deleted key for up to
// 5 minutes: the later one refuses to start, unless server.allowMemoryStorageWithPeers accepts it, with a warning.
// Only real PostgreSQL can tell two instances apart (PGlite has one session, in which advisory locks are re-entrant).
describe.skipIf(!onPostgres)('several instances on one PostgreSQL database', () => {
  let database: TestDatabase & { url: string }
  let direct: pg.Client
  const running: TestApp[] = []
  const memory = { storage: { url: undefined } }
  const redis = { storage: { url: process.env.REDIS_URL } }
  const boot = async (input: Parameters<typeof bootTestApp>[0], logger = createConsola({ level: -999 })) => {
    const app = await bootTestApp(input, { databaseUrl: database.url, logger })
    running.push(app)
    return app
  }
  const lockHolders = async () => (await direct.query<{ mode: string }>(
    `select mode from pg_locks l join pg_database d on d.oid = l.database where l.locktype = 'advisory' and l.objid = 740221302 and d.datname = current_database() and l.granted`,
  )).rows.map((r) => r.mode).sort()

  beforeAll(async () => {
    database = await sharedDatabase()
    direct = new pg.Client({ connectionString: database.url })
    await direct.connect()
  })
  afterEach(async () => {
    for (const app of running.splice(0)) await app.close()
  })
  afterAll(async () => {
    await direct?.end()
    await database?.drop()
  })

  it('a second instance without Redis refuses to start, naming the fix', async () => {
    await boot(memory)
    const refused = await bootTestApp(memory, { databaseUrl: database.url }).then(() => undefined, (error: unknown) => error)
    expect(refused).toBeInstanceOf(BootError)
    expect((refused as BootError).describe()).toMatch(/Another dcgate instance runs on this database, and this one has no Redis/)
    expect((refused as BootError).describe()).toContain('server.allowMemoryStorageWithPeers')
    expect(await lockHolders()).toEqual(['ExclusiveLock'])
  })

  it.skipIf(!onRedis)('any mix of Redis and memory is refused, whichever starts first; two with Redis share', async () => {
    await boot(redis)
    await expect(bootTestApp(memory, { databaseUrl: database.url })).rejects.toThrow(/this one has no Redis/)
    await boot(redis)
    expect(await lockHolders()).toEqual(['ShareLock', 'ShareLock'])
    for (const app of running.splice(0)) await app.close()
    await boot(memory)
    await expect(bootTestApp(redis, { databaseUrl: database.url })).rejects.toThrow(/Another dcgate instance without Redis runs on this database/)
  })

  it('with server.allowMemoryStorageWithPeers it starts, and warns at every start', async () => {
    const warnings: string[] = []
    const logger = createConsola({ level: 1 })
    // Only this setting's warnings: others depend on the day (a bundled data list's age, a vendor's sunset).
    logger.setReporters([{ log: (entry: LogObject) => {
      const text = entry.args.join(' ')
      if (entry.type === 'warn' && text.includes('allowMemoryStorageWithPeers')) warnings.push(text)
    } }])
    const allowed = { ...memory, server: { allowMemoryStorageWithPeers: true } }
    await boot(allowed, logger)
    await boot(allowed, logger)
    expect(warnings).toHaveLength(2)
    expect(warnings[1]).toMatch(/allowMemoryStorageWithPeers is set and another instance runs on this database/)
  })

  it('takes the lock again after its connection drops', async () => {
    await boot(memory)
    await direct.query(`select pg_terminate_backend(l.pid) from pg_locks l where l.locktype = 'advisory' and l.objid = 740221302`)
    await expect.poll(lockHolders, { timeout: 15_000, interval: 250 }).toEqual([])
    await expect.poll(lockHolders, { timeout: 15_000, interval: 250 }).toEqual(['ExclusiveLock'])
    await expect(bootTestApp(memory, { databaseUrl: database.url })).rejects.toThrow(/this one has no Redis/)
  })
})
