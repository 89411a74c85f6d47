import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { onPostgres, sharedDatabase, type TestDatabase } from '../helpers/database.ts'

// database.statementTimeoutMs is short so a stalled database fails requests fast; a background statement that
// declares its own timeoutMs (an erasure's scan, a retention delete) runs longer, and its connection gets the
// short limit back afterwards. On PostgreSQL only: PGlite runs pg_sleep inside this process, so neither the server's
// statement_timeout nor the client's timer can interrupt it.
describe.skipIf(!onPostgres)('statement timeouts', () => {
  let database: TestDatabase & { url: string }
  let app: TestApp
  beforeAll(async () => {
    database = await sharedDatabase()
    app = await bootTestApp({ plugins: [], database: { statementTimeoutMs: 300 } }, { databaseUrl: database.url })
})
afterAll(async () => {
  await app?.close()
  await database?.drop()
})

const sleep = (timeoutMs?: number) => app.dcgate.context.prepared<{ slept: boolean }>({ name: '', text: 'select true as slept from pg_sleep(1.5)', reusePlan: false, timeoutMs }, [])

it('cancels a statement past database.statementTimeoutMs', async () => {
  await expect(sleep()).rejects.toThrow()
})

it('lets a statement with its own timeoutMs run past it, then limits the next statement again', async () => {
  expect(await sleep(5000)).toEqual([{ slept: true }])
  await expect(sleep()).rejects.toThrow()
  expect(await app.dcgate.context.prepared<{ one: number }>({ name: '', text: 'select 1 as one' }, [])).toEqual([{ one: 1 }])
})
})
