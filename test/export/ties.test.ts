import { afterAll, beforeAll, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { pageAll, sqlOf } from './support.ts'

// The acceptance case: 10,000 sessions, 2,000 of them at one timestamp, paged at limit 7.
let app: TestApp
let key: string

beforeAll(async () => {
  app = await bootTestApp({ plugins: ['export'], sites: [{ id: 'demo', name: 'Demo' }, { id: 'other', name: 'Other' }] }, { builtInPlugins })
  key = await app.createKey('demo')
  const sql = sqlOf(app)
  // 2,000 at 12:00:00.5 exactly; 8,000 more a millisecond apart around them (so some share a time with the run's
  // neighbours' milliseconds too); and another site's 2,000 at the same instant, which must never appear.
  await sql(`insert into visits (id, site_id, session_id, started_at)
    select gen_random_uuid(), 'demo', 'tie-' || n, timestamptz '2026-05-01T12:00:00.5Z' from generate_series(1, 2000) n
    union all
    select gen_random_uuid(), 'demo', 'spread-' || n, timestamptz '2026-05-01T12:00:00.5Z' + (n - 4000) * interval '1 millisecond' / 2 from generate_series(1, 8000) n
    union all
    select gen_random_uuid(), 'other', 'other-' || n, timestamptz '2026-05-01T12:00:00.5Z' from generate_series(1, 2000) n`)
})
afterAll(async () => {
  await app?.close()
})

it('returns each of 10,000 sessions exactly once at limit 7, 2,000 of them sharing one timestamp', { timeout: 300_000 }, async () => {
  const { records, pages } = await pageAll(app, key, '/api/v1/export/sessions', { limit: 7 })
  expect(pages).toBe(Math.ceil(10_000 / 7))
  const ids = records.map((r) => r.session_id as string)
  expect(new Set(ids).size).toBe(10_000)
  expect(ids.filter((id) => id.startsWith('tie-'))).toHaveLength(2000)
  expect(ids.some((id) => id.startsWith('other-'))).toBe(false)
  const times = records.map((r) => r.start_time as string)
  expect(times).toEqual([...times].sort())
})

it('continues the same from a since with an offset and fewer digits, inside the run of equal times', { timeout: 120_000 }, async () => {
  // 14:00:00.5+02:00 is the tied instant; the half before it is excluded, all 2,000 ties and the half after are in.
  const { records } = await pageAll(app, key, '/api/v1/export/sessions', { since: '2026-05-01T14:00:00.5+02:00', until: '2026-05-01T12:00:01Z', limit: 500 })
  const ids = records.map((r) => r.session_id as string)
  expect(new Set(ids).size).toBe(ids.length)
  expect(ids.filter((id) => id.startsWith('tie-'))).toHaveLength(2000)
  // spread-n is at .5 s + (n - 4000) / 2 ms: n from 4000 (the tied instant) up to 4999 (before 12:00:01).
  expect(ids.filter((id) => id.startsWith('spread-'))).toHaveLength(1000)
})
