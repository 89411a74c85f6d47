import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { builtInPlugins } from '../../plugins/index.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import type { FakeServer } from '../fakes/server.ts'
import { startFakeTestPlatform, testPlatform } from './test-platform.ts'

// Issue 30: a conversion's and its deliveries' ids are made in time order (UUID version 7 layout), so a busy table's
// indexes grow at their right edge instead of on random pages (docs/architecture.md, "Cost of a conversion").
let fake: FakeServer
let app: TestApp
let key: string

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const VERSION_7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** Milliseconds since 1970 in the id's first 48 bits. */
const msOf = (id: string) => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16)

beforeAll(async () => {
  fake = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['intake'],
    sites: [{ id: 'shop', name: 'Shop', destinations: { testads: { baseUrl: fake.url, token: 'good' } } }],
  }, { adapters: [testPlatform], builtInPlugins })
  key = await app.createKey('shop')
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

async function purchase(messageId: string): Promise<void> {
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({ event: 'Purchase', messageId, properties: { value: 10, currency: 'EUR' }, context: { traits: { email: `${messageId}@shop.example` } } }),
  })
  expect(response.status).toBe(202)
}

describe('ids of new conversions and deliveries', () => {
  it('are version 7 UUIDs carrying the time they were stored, a later conversion sorting after an earlier one', async () => {
    await purchase('first')
    await new Promise((resolve) => setTimeout(resolve, 5))
    await purchase('second')
    const rows = await sql<{ message_id: string, id: string, created_at: Date, delivery_id: string }[]>(
      `select c.message_id, c.id::text as id, c.created_at, d.id::text as delivery_id
       from conversions c join deliveries d on d.conversion_id = c.id where c.site_id = 'shop' order by c.created_at`)
    expect(rows.map((r) => r.message_id)).toEqual(['first', 'second'])
    for (const row of rows) {
      expect(row.id).toMatch(VERSION_7)
      expect(row.delivery_id).toMatch(VERSION_7)
      // Made by the statement that stored the row: within a second of its created_at (the transaction's start).
      expect(Math.abs(msOf(row.id) - new Date(row.created_at).getTime())).toBeLessThan(1000)
    }
    expect(rows[0]!.id < rows[1]!.id).toBe(true)
    expect(rows[0]!.delivery_id < rows[1]!.delivery_id).toBe(true)
  })
})
