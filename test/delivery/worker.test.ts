import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { sharedDatabase } from '../helpers/database.ts'
import type { FakeServer } from '../fakes/server.ts'
import { startFakeTestPlatform, testPlatform } from './test-platform.ts'
import { builtInPlugins } from '../../plugins/index.ts'

// Two instances on one database, both workers polling hard: every due delivery is sent exactly once.
let database: Awaited<ReturnType<typeof sharedDatabase>>
let fake: FakeServer
let a: TestApp
let b: TestApp
const ROWS = 200

beforeAll(async () => {
  database = await sharedDatabase()
  fake = await startFakeTestPlatform()
  const config = {
    plugins: ['intake'],
    delivery: { workerIntervalMs: 10 },
    sites: [{ id: 'demo', name: 'Demo', destinations: { testads: { baseUrl: fake.url, token: 'good' } } }],
  }
  a = await bootTestApp(config, { databaseUrl: database.url, adapters: [testPlatform], builtInPlugins })
  b = await bootTestApp(config, { databaseUrl: database.url, adapters: [testPlatform], builtInPlugins })
})
afterAll(async () => {
  await a?.close()
  await b?.close()
  await fake?.close()
  await database?.drop()
})

describe('several workers', () => {
  it('never deliver one row twice', async () => {
    const sql = (text: string, params: unknown[] = []) => a.dcgate.database.orm.em.getConnection().execute(text, params)
    // Due rows as a crashed instance or a burst of retries leaves them, written in one go so both workers race for them.
    await sql(`insert into conversions (id, site_id, message_id, source, event, standard_event, occurred_at, channel, confirmation, state)
      select gen_random_uuid(), 'demo', 'race-' || n, 'automation', 'Lead', 'Lead', now(), 'online', 'tracked', 'accepted' from generate_series(1, ?) n`, [ROWS])
    await sql(`insert into deliveries (id, conversion_id, site_id, provider, status, next_attempt_at)
      select gen_random_uuid(), id, 'demo', 'testads', 'pending', now() from conversions where message_id like 'race-%'`)
    await expect.poll(async () => (await sql(`select count(*)::int as n from deliveries where status = 'sent' and conversion_id in (select id from conversions where message_id like 'race-%')`))[0]!.n, { timeout: 20_000 })
      .toBe(ROWS)
    const sentIds = fake.requests.flatMap((r) => (JSON.parse(r.body) as { events: { id: string }[] }).events.map((e) => e.id)).filter((id) => id.startsWith('race-'))
    expect(sentIds).toHaveLength(ROWS)
    expect(new Set(sentIds).size).toBe(ROWS)
  })
})
