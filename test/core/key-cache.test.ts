import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKeyVerifier, type KeyVerifier } from '../../core/auth/verifier.ts'
import { generatePrivateKey, hashKey } from '../../core/auth/keys.ts'
import { bootTestApp, health, type TestApp } from '../helpers/app.ts'
import { onRedis, sharedDatabase } from '../helpers/database.ts'

describe('key cache windows', () => {
  let app: TestApp
  let clock = Date.now()
  let verifier: KeyVerifier
  const sql = (text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute(text, params)

  beforeAll(async () => {
    app = await bootTestApp()
    // A verifier on the app's own database and storage, with a clock the test moves.
    verifier = createKeyVerifier({ prepared: app.dcgate.context.prepared, shared: onRedis ? app.dcgate.storage : undefined, sites: app.dcgate.context.sites, onBackgroundError: () => {}, now: () => clock })
  })
  afterAll(() => app?.close())

  it('trusts a valid key for up to 5 minutes without asking the database again', async () => {
    const key = await app.createKey('demo', 'cached')
    expect(await verifier.verify(key)).toMatchObject({ site: { id: 'demo' } })
    await sql('delete from api_keys where hash = ?', [hashKey(key)]) // behind the cache's back, not through revoke
    clock += 4 * 60_000 + 59_000
    expect(await verifier.verify(key)).toMatchObject({ site: { id: 'demo' } })
    clock += 2_000
    expect(await verifier.verify(key)).toBeNull()
  })

  it('remembers an unknown key as invalid for 30 seconds', async () => {
    const key = generatePrivateKey()
    expect(await verifier.verify(key)).toBeNull()
    await sql(`insert into api_keys (id, site_id, name, prefix, hash) values (gen_random_uuid(), 'demo', 'late', ?, ?)`, [key.slice(0, 12), hashKey(key)])
    clock += 29_000
    expect(await verifier.verify(key)).toBeNull()
    clock += 2_000
    expect(await verifier.verify(key)).toMatchObject({ site: { id: 'demo' } })
  })

  it.skipIf(onRedis)('a single instance answers cached verdicts synchronously, and asks again once they expire', async () => {
    const key = await app.createKey('demo', 'peeked')
    expect(verifier.peek(key)).toBeUndefined()
    await verifier.verify(key)
    expect(verifier.peek(key)).toMatchObject({ site: { id: 'demo' } })
    expect(verifier.peek('not-a-key')).toBeNull()
    clock += 5 * 60_000 + 1
    expect(verifier.peek(key)).toBeUndefined()
  })

  it('revoking overrides a cached valid verdict at once', async () => {
    const key = await app.createKey('demo', 'revoked')
    expect(await verifier.verify(key)).not.toBeNull()
    await sql('delete from api_keys where hash = ?', [hashKey(key)])
    await verifier.revoke(hashKey(key))
    expect(await verifier.verify(key)).toBeNull()
  })
})

// Several instances must share Redis (docs/deployment); on the default run there is none to share.
describe.skipIf(!onRedis)('two instances sharing PostgreSQL and Redis', () => {
  let database: Awaited<ReturnType<typeof sharedDatabase>>
  let a: TestApp
  let b: TestApp
  beforeAll(async () => {
    database = await sharedDatabase()
    a = await bootTestApp({}, { databaseUrl: database.url, redis: true })
    b = await bootTestApp({}, { databaseUrl: database.url, redis: true })
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await database?.drop()
  })

  it('a key deleted on one instance is refused by the other at once, though it had cached it as valid', async () => {
    const key = await a.createKey('demo', 'shared')
    expect((await health(b, key)).status).toBe(200)
    expect((await health(a, key)).status).toBe(200)
    expect((await a.admin('DELETE', `/sites/demo/keys/${key.slice(0, 12)}`)).status).toBe(200)
    expect((await health(b, key)).status).toBe(401)
    expect((await health(a, key)).status).toBe(401)
  })
})
