import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { onPostgres } from '../helpers/database.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { getPage, insertConversions, insertVisits, sqlOf, uuidOf, type Sql } from './support.ts'

// Records written while a client pages (docs/api/export.md, "Records being written"). The client here syncs the way
// the docs say: follow next_since; on the last page keep the x-export-until header as the since of the next round.
let app: TestApp
let sql: Sql
let key: string

beforeAll(async () => {
  app = await bootTestApp({ plugins: ['export'], capture: { flushIntervalMs: 100 }, sites: [{ id: 'demo', name: 'Demo' }] }, { builtInPlugins })
  sql = sqlOf(app)
  key = await app.createKey('demo')
})
afterAll(async () => {
  await app?.close()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One sync round: every page from `state.since` on; afterwards `state.since` is where the next round resumes. */
async function syncRound(path: string, state: { since?: string }, limit = 3): Promise<Record<string, unknown>[]> {
  const records: Record<string, unknown>[] = []
  for (;;) {
    const page = await getPage(app, key, `/api/v1/export/${path}`, { since: state.since, limit: String(limit) })
    expect(page.status).toBe(200)
    records.push(...page.body.data)
    state.since = page.body.pagination.next_since ?? page.until!
    if (!page.body.pagination.has_more) return records
  }
}

/** Syncs until `done` resolves, then once more after the horizon has passed everything written. */
async function syncWhile(path: string, done: Promise<unknown>, settleMs: number): Promise<Record<string, unknown>[]> {
  const state: { since?: string } = {}
  const seen: Record<string, unknown>[] = []
  let finished = false
  void done.then(() => (finished = true))
  while (!finished) {
    seen.push(...await syncRound(path, state))
    await sleep(20)
  }
  await sleep(settleMs)
  seen.push(...await syncRound(path, state))
  return seen
}

describe('a client syncing while records are written sees each exactly once', () => {
  it('identified users stamped by the database clock', { timeout: 60_000 }, async () => {
    const writer = (async () => {
      for (let i = 0; i < 40; i++) {
        await sql(`insert into identified_users (id, site_id, email, email_hash, source)
          select gen_random_uuid(), 'demo', 'w' || ? || '-' || n || '@example.com', md5(? || '-' || n) || md5(? || '-' || n), 'client_sdk' from generate_series(1, 5) n`, [i, i, i])
        await sleep(25)
      }
    })()
    const seen = await syncWhile('identified-users', writer, 1300)
    const ids = seen.map((r) => r.id)
    expect(ids.length).toBe(200)
    expect(new Set(ids).size).toBe(200)
  })

  it('sessions whose start time reaches the database up to the capture lag late', { timeout: 60_000 }, async () => {
    let n = 0
    const writer = (async () => {
      for (let i = 0; i < 40; i++) {
        // The capture buffer writes a visit up to flushIntervalMs (100) after it arrived, the script sends its hits up to
        // 1 s after they happen: start times up to 1.1 s in the past, by the database clock.
        await sql(`insert into visits (id, site_id, session_id, started_at)
          select gen_random_uuid(), 'demo', 'live-' || (? + n), now() - random() * interval '1100 milliseconds' from generate_series(1, 5) n`, [n])
        n += 5
        await sleep(25)
      }
    })()
    const seen = await syncWhile('sessions', writer, 2300)
    const ids = seen.map((r) => r.session_id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.length).toBe(200)
  })
})

describe('conversions become listed when delivered', () => {
  it('the horizon waits for a conversion still in delivery, so it is not passed before it is sent', { timeout: 30_000 }, async () => {
    const [{ now }] = await sql<[{ now: string }]>(`select to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as now`)
    await insertConversions(sql, [
      { id: uuidOf(1n), siteId: 'demo', createdAt: now, orderId: 'o-1', deliveries: [['meta', 'pending'], ['google_ads', 'retrying']] },
      { id: uuidOf(2n), siteId: 'demo', createdAt: new Date(Date.parse(now) + 5).toISOString(), orderId: 'o-2', deliveries: [['meta', 'sent']] },
    ])
    await sleep(1200)
    const state: { since?: string } = {}
    expect(await syncRound('conversions', state)).toEqual([])
    expect(Date.parse(state.since!)).toBeLessThanOrEqual(Date.parse(now))
    await sql(`update deliveries set status = 'sent', http_status = 200, sent_at = now() where conversion_id = ? and provider = 'google_ads'`, [uuidOf(1n)])
    await sleep(600) // the horizon is re-read at most every 500 ms
    const after = await syncRound('conversions', state)
    expect(after.map((r) => [r.id, r.provider, r.events_received])).toEqual([[uuidOf(1n), 'google_ads', 1], [uuidOf(2n), 'meta', 1]])
    expect(await syncRound('conversions', state)).toEqual([])
  })
})

describe('what a client cannot see', () => {
  it('a session written after the client paged past its start time is not listed to that client, and nothing repeats', { timeout: 30_000 }, async () => {
    await sql('delete from visits')
    await insertVisits(sql, [{ id: uuidOf(10n), siteId: 'demo', startedAt: '2026-06-01T00:00:10Z' }, { id: uuidOf(11n), siteId: 'demo', startedAt: '2026-06-01T00:00:20Z' }])
    const state: { since?: string } = {}
    expect((await syncRound('sessions', state)).map((r) => r.start_time)).toEqual(['2026-06-01T00:00:10.000000Z', '2026-06-01T00:00:20.000000Z'])
    // A visit whose first hit arrives an hour late, and an earlier hit moving a seen visit's start back (the capture
    // write keeps the least start time): both are behind the client's since.
    await insertVisits(sql, [{ id: uuidOf(12n), siteId: 'demo', startedAt: '2026-06-01T00:00:15Z' }])
    await sql(`update visits set started_at = '2026-06-01T00:00:05Z' where id = ?`, [uuidOf(11n)])
    expect(await syncRound('sessions', state)).toEqual([])
    // A fresh read of the window lists them.
    expect((await getPage(app, key, '/api/v1/export/sessions', {})).body.data.map((r) => r.start_time)).toEqual(['2026-06-01T00:00:05.000000Z', '2026-06-01T00:00:10.000000Z', '2026-06-01T00:00:15.000000Z'])
  })
})

describe.runIf(onPostgres)('transactions committing out of order (PostgreSQL)', () => {
  it('a record stamped before the horizon but committed after it is still listed, once', { timeout: 30_000 }, async () => {
    const slow = new pg.Client({ connectionString: app.dcgate.context.config.database.url })
    await slow.connect()
    try {
      await slow.query('begin')
      // identified_at = now(): the start of this transaction, which stays open while later records commit.
      await slow.query(`insert into identified_users (id, site_id, email, email_hash, source) values ($1, 'demo', 'slow@example.com', repeat('a', 64), 'client_sdk')`, [uuidOf(100n)])
      await sleep(1200)
      await sql(`insert into identified_users (id, site_id, email, email_hash, source) values (?, 'demo', 'fast@example.com', repeat('b', 64), 'client_sdk')`, [uuidOf(101n)])
      await sleep(1200)
      const state: { since?: string } = {}
      const before = await syncRound('identified-users', state)
      // The horizon stays at the open transaction's start: the later, committed record waits too.
      expect(before.map((r) => r.email)).not.toContain('fast@example.com')
      await slow.query('commit')
      await sleep(1200)
      const after = await syncRound('identified-users', state)
      const emails = [...before, ...after].map((r) => r.email)
      expect(emails.filter((e) => e === 'slow@example.com')).toHaveLength(1)
      expect(emails.filter((e) => e === 'fast@example.com')).toHaveLength(1)
      expect(new Set(emails).size).toBe(emails.length)
    }
    finally {
      await slow.end()
    }
  })
})
