import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { sha256Hex } from '../../core/identity/hash.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

// Rows the database refused wait in <dataDir>/capture-dead-letter/ as received: an erasure reaches them too.
let app: TestApp
beforeAll(async () => {
  app = await bootTestApp({ sites: [{ id: 'shop', name: 'Shop' }, { id: 'other', name: 'Other' }] })
})
afterAll(() => app?.close())

it("drops the dead-letter lines of the erased person's site that hold their address or its hash, and keeps the rest", async () => {
  const dir = join(app.dataDir, 'capture-dead-letter')
  mkdirSync(dir, { recursive: true })
  const file = join(dir, '2026-11-25.ndjson')
  const line = (site: string, text: string) => JSON.stringify({ at: '2026-11-25T10:00:00.000Z', table: 'page_events', code: '22P05', reason: 'bad', row: [site, text] })
  const lines = [
    line('shop', 'https://shop.example/thanks?email=Ann%40Example.com'),
    line('shop', `identified ${sha256Hex('ann@example.com')}`),
    line('shop', 'https://shop.example/'),
    line('other', 'https://other.example/?email=ann@example.com'),
  ]
  writeFileSync(file, lines.map((l) => `${l}\n`).join(''))

  await app.dcgate.context.hooks.callHook('dsar:erase', { siteId: 'shop', email: 'Ann@Example.com', emailHash: sha256Hex('ann@example.com') })

  expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toEqual([lines[2], lines[3]])
})
