import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { sharedDatabase, type TestDatabase } from '../helpers/database.ts'
import { PendingRows } from '../../plugins/capture/store/pending.ts'
import type { CaptureBatch } from '../../plugins/capture/store/rows.ts'

// The capture plugin on a database that fails: a journal holding rows PostgreSQL refuses does not stop the server
// from starting, and a database that is away makes /collect answer 503 past capture.maxPendingMb (memory and
// journal stay bounded) until it is back, with no restart.
let database: TestDatabase & { url: string }
let db: pg.Client
beforeAll(async () => {
  database = await sharedDatabase()
  db = new pg.Client({ connectionString: database.url })
  await db.connect()
})
afterAll(async () => {
  await db?.end()
  await database?.drop()
})

const rows = async (text: string, values: unknown[] = []) => (await db.query(text, values)).rows as Record<string, unknown>[]
const pageCount = async (session: string) => (await rows('select page_count from visits where session_id = $1', [session]))[0]?.page_count
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'

function collect(app: TestApp, session: string, hits: unknown[]) {
  const copKey = app.dcgate.context.sites.byId('demo')!.copKey
  return app.request(`/collect?cop_key=${copKey}`, {
    method: 'POST', headers: { 'content-type': 'text/plain', 'user-agent': CHROME, 'x-forwarded-for': '73.162.0.1' },
    body: JSON.stringify({ v: 1, sid: session, vid: 'visitor-fault', consent: 'granted', hits }),
  })
}
const pageview = (url = 'https://shop.example/') => ({ t: 'pageview', ts: Date.now(), url })

function batch(session: string, title: string | null = null): CaptureBatch {
  const at = Date.now()
  return {
    events: [{ id: crypto.randomUUID(), site_id: 'demo', session_id: session, kind: 'pageview', name: null, url: 'https://shop.example/', referrer: null, title, props: null, occurred_at: at, received_at: at }],
    visit: {
      site_id: 'demo', session_id: session, visitor_id: 'v-1', started_at: at, ended_at: at, ip_address: '203.0.113.9', user_agent: 'UA', country: 'DE',
      city: null, isp: null, organization: null, asn: null, is_vpn: false, is_proxy: false, is_tor: false, is_hosting: false, platform: 'desktop',
      browser: null, os: null, is_bot: false, bot_reasons: [], referrer: null, landing_url: 'https://shop.example/', click_ids: {}, consent: 'granted', device_hash: null, gpc: false, consent_purposes: null,
    },
  }
}

/** A TCP proxy in front of the database that can be made to refuse and drop every connection. */
async function startProxy(target: string): Promise<{ url: string, down: () => void, up: () => void, close: () => Promise<void> }> {
  const to = new URL(target)
  const open = new Set<Socket>()
  let refusing = false
  const server: Server = createServer((client) => {
    if (refusing) return void client.destroy()
    const upstream = connect(Number(to.port || 5432), to.hostname)
    for (const socket of [client, upstream]) {
      open.add(socket)
      socket.on('close', () => open.delete(socket))
      socket.on('error', () => {})
    }
    client.pipe(upstream).pipe(client)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = new URL(target)
  url.hostname = '127.0.0.1'
  url.port = String((server.address() as { port: number }).port)
  return {
    url: url.toString(),
    down() {
      refusing = true
      for (const socket of open) socket.destroy()
    },
    up() {
      refusing = false
    },
    close: () => new Promise<void>((resolve) => {
      for (const socket of open) socket.destroy()
      server.close(() => resolve())
    }),
  }
}

const dirBytes = (dir: string) => readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0)

describe('capture when the database fails', () => {
  it('starts with rows PostgreSQL refuses in the journal a crashed process left, writes the rest, and keeps capturing', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'capture-faults-'))
    // What a process that died had journaled: good hits, a hit with a NUL, and a line that is not a record.
    const pending = new PendingRows()
    const line = (b: CaptureBatch) => {
      pending.add(b)
      return Buffer.concat(pending.journalLine()).toString('utf8')
    }
    const poison = batch('fault-poison-1', 'Grüße\u0000')
    mkdirSync(join(dataDir, 'capture-journal'))
    writeFileSync(join(dataDir, 'capture-journal', '999999991-1-1.ndjson'), [line(batch('fault-before-1')), line(poison), '{"format":4,"e":[[\n', line(batch('fault-after-1'))].join(''))

    const app = await bootTestApp({ capture: { flushIntervalMs: 20 } }, { databaseUrl: database.url, dataDir })
    try {
      expect(await pageCount('fault-before-1')).toBe(1)
      expect(await pageCount('fault-after-1')).toBe(1)
      expect(await rows('select id from page_events where id = $1', [poison.events[0]!.id])).toEqual([])
      expect(readdirSync(join(dataDir, 'capture-journal')).filter((f) => f.startsWith('999999991-'))).toEqual([])
      const letters = readdirSync(join(dataDir, 'capture-dead-letter')).flatMap((f) => readFileSync(join(dataDir, 'capture-dead-letter', f), 'utf8').trim().split('\n'))
      expect(letters.map((l) => JSON.parse(l) as { table: string, code: string }).map((l) => `${l.table} ${l.code}`).sort()).toEqual(['journal unreadable', 'page_events 22P05'])

      expect((await collect(app, 'fault-live-1', [pageview()])).status).toBe(202)
      await expect.poll(() => pageCount('fault-live-1')).toBe(1)
    }
    finally {
      await app.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('answers 503 with Retry-After past capture.maxPendingMb while the database is away, then takes hits again without a restart', async () => {
    const proxy = await startProxy(database.url)
    const dataDir = mkdtempSync(join(tmpdir(), 'capture-faults-'))
    const app = await bootTestApp({ capture: { flushIntervalMs: 50, maxPendingMb: 1 } }, { databaseUrl: proxy.url, dataDir })
    try {
      expect((await collect(app, 'fault-up-1', [pageview()])).status).toBe(202)
      await expect.poll(() => pageCount('fault-up-1')).toBe(1)

      proxy.down()
      // Ten hits of about 4 KB a request: the 1 MB cap is about 25 requests.
      const big = Array.from({ length: 10 }, (_, i) => pageview(`https://shop.example/${i}?q=${'x'.repeat(4000)}`))
      const accepted: string[] = []
      let busy: Response | undefined
      for (let i = 0; i < 200 && !busy; i++) {
        const session = `fault-down-${i}`
        const response = await collect(app, session, big)
        if (response.status === 202) accepted.push(session)
        else busy = response
      }
      expect(busy?.status).toBe(503)
      expect(busy!.headers.get('retry-after')).toBe('5')
      expect(await busy!.json()).toEqual({ message: expect.stringContaining('retry later'), code: 'CAPTURE_BUSY' })
      // Bounded: what was accepted, and the journal that holds it, stay within the cap and one request.
      expect(accepted.length).toBeGreaterThan(5)
      expect(accepted.length * 10 * 4000).toBeLessThan(1024 * 1024 + 50_000)
      expect(dirBytes(join(dataDir, 'capture-journal'))).toBeLessThan(1024 * 1024 + 100_000)
      expect((await collect(app, 'fault-still-down', [pageview()])).status).toBe(503)

      proxy.up()
      // No restart: once the waiting hits are written, hits are taken again, and none that was answered 202 is lost.
      await expect.poll(async () => (await collect(app, 'fault-back-1', [pageview()])).status, { timeout: 20_000, interval: 200 }).toBe(202)
      await expect.poll(async () => (await rows(`select count(*)::int as n from visits where session_id like 'fault-down-%'`))[0]!.n, { timeout: 20_000 }).toBe(accepted.length)
      expect(await pageCount(accepted.at(-1)!)).toBe(10)
      await expect.poll(() => pageCount('fault-back-1'), { timeout: 10_000 }).toBe(1)
    }
    finally {
      await app.close()
      await proxy.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 90_000)
})
