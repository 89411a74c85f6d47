import { randomUUID } from 'node:crypto'
import { mkdtempSync, readdirSync, renameSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createConsola } from 'consola'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { createCaptureWriter } from '../../plugins/capture/store/writer.ts'
import type { CaptureBatch } from '../../plugins/capture/store/rows.ts'

// The capture batch writer on the real database: batches by size and time, and a hit it acknowledged survives
// the process dying before the batch was written (the journal), written once even if replayed twice.
let app: TestApp
const logger = createConsola({ level: -999 })
beforeAll(async () => {
  app = await bootTestApp({ plugins: [] })
})
afterAll(() => app?.close())

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const writerIn = (journalDir: string, flushSize = 1000, flushIntervalMs = 60_000) => createCaptureWriter({
  prepared: app.dcgate.context.prepared, journalDir, deadLetterDir: `${journalDir}-dead-letter`, flushSize, flushIntervalMs, logger, onError: (error) => { throw error },
})

function batch(session: string, pages = 1): CaptureBatch {
  const at = Date.now()
  return {
    events: Array.from({ length: pages }, () => ({ id: randomUUID(), site_id: 'demo', session_id: session, kind: 'pageview' as const, name: null, url: 'https://shop.example/', referrer: null, title: null, props: null, occurred_at: at, received_at: at })),
    visit: {
      site_id: 'demo', session_id: session, visitor_id: 'v-1', started_at: at, ended_at: at, ip_address: '203.0.113.9', user_agent: 'UA', country: 'DE',
      city: null, isp: null, organization: null, asn: null, is_vpn: false, is_proxy: false, is_tor: false, is_hosting: false, platform: 'desktop',
      browser: null, os: null, is_bot: false, bot_reasons: [], referrer: null, landing_url: 'https://shop.example/', click_ids: { gclid: session }, consent: 'unknown', device_hash: null, gpc: false, consent_purposes: null,
    },
  }
}
const pages = async (session: string) => (await sql<{ page_count: number }[]>('select page_count from visits where session_id = ?', [session]))[0]?.page_count

describe('capture batch writer', () => {
  it('writes nothing until the size or the interval is reached, then everything in one go', async () => {
    const writer = writerIn(mkdtempSync(join(tmpdir(), 'journal-')), 3, 50)
    await writer.start()
    await writer.add(batch('size-1'))
    expect(await pages('size-1')).toBeUndefined()
    await writer.add(batch('size-1', 2))
    await expect.poll(() => pages('size-1')).toBe(3)
    await writer.add(batch('time-1'))
    await expect.poll(() => pages('time-1'), { timeout: 2000 }).toBe(1)
    await writer.stop()
  })

  it('flushes what is left on stop, and leaves no journal behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'))
    const writer = writerIn(dir)
    await writer.start()
    await writer.add(batch('stop-1', 2))
    await writer.stop()
    expect(await pages('stop-1')).toBe(2)
    expect(readdirSync(dir)).toEqual([])
  })

  it('writes the hits a crashed process acknowledged, once, when the next one starts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'))
    const crashed = writerIn(dir)
    await crashed.add(batch('crash-1', 2))
    await crashed.add(batch('crash-2'))
    // The process "dies": nothing was flushed. Its segment carries a pid no process has.
    const [segment] = readdirSync(dir)
    renameSync(join(dir, segment!), join(dir, segment!.replace(/^\d+-/, '999999999-')))
    expect(await pages('crash-1')).toBeUndefined()

    const next = writerIn(dir)
    await next.start()
    expect(await pages('crash-1')).toBe(2)
    expect(await pages('crash-2')).toBe(1)
    expect(readdirSync(dir).filter((f) => f.startsWith('999999999-'))).toEqual([])
    // The replayed visit is the one acknowledged, field for field (values travel as arrays, by position).
    expect(await sql('select visitor_id, ip_address, country, asn, is_vpn, platform, bot_reasons, click_ids, consent, landing_url from visits where session_id = ?', ['crash-1']))
      .toEqual([{ visitor_id: 'v-1', ip_address: '203.0.113.9', country: 'DE', asn: null, is_vpn: false, platform: 'desktop', bot_reasons: [], click_ids: { gclid: 'crash-1' }, consent: 'unknown', landing_url: 'https://shop.example/' }])
    await next.stop()
  })

  it('merges the requests of one visit before a flush, also when they are replayed from the journal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'))
    const crashed = writerIn(dir)
    const first = batch('merge-1')
    const second = batch('merge-1', 2)
    const at = first.visit!.started_at // each batch() reads the clock: the second may be a millisecond later
    second.visit = { ...second.visit!, landing_url: 'https://shop.example/later', referrer: 'https://later.example/', click_ids: { msclkid: 'm-1' }, started_at: at + 1000, ended_at: at + 5000 }
    first.visit = { ...first.visit!, referrer: 'https://www.google.com/', ended_at: at }
    await crashed.add(first)
    await crashed.add(second)
    const [segment] = readdirSync(dir)
    renameSync(join(dir, segment!), join(dir, segment!.replace(/^\d+-/, '999999997-')))
    const next = writerIn(dir)
    await next.start()
    expect(await sql('select page_count, landing_url, referrer, click_ids, duration_ms from visits where session_id = ?', ['merge-1']))
      .toEqual([{ page_count: 3, landing_url: 'https://shop.example/', referrer: 'https://www.google.com/', click_ids: { gclid: 'merge-1', msclkid: 'm-1' }, duration_ms: '5000' }])
    await next.stop()
  })

  it('keeps text beyond ASCII intact, byte for byte', async () => {
    const writer = writerIn(mkdtempSync(join(tmpdir(), 'journal-')))
    await writer.start()
    const b = batch('utf8-1')
    const title = 'Grüße aus Köln — 東京 👋'
    b.events[0] = { ...b.events[0]!, title, url: 'https://shop.example/caf\u00e9?q=\u00fc' }
    b.visit = { ...b.visit!, organization: 'Société Générale «SG»', user_agent: 'UA \u2028 ✓' }
    await writer.add(b)
    await writer.flush()
    expect(await sql('select title, url from page_events where id = ?', [b.events[0]!.id])).toEqual([{ title, url: 'https://shop.example/café?q=ü' }])
    expect(await sql('select organization, user_agent from visits where session_id = ?', ['utf8-1'])).toEqual([{ organization: 'Société Générale «SG»', user_agent: 'UA \u2028 ✓' }])
    await writer.stop()
  })

  it('keeps the rows of a failed flush, and their journal, for the next one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'))
    const errors: unknown[] = []
    let failing = true
    const writer = createCaptureWriter({
      prepared: (statement, values) => (failing ? Promise.reject(new Error('database away')) : app.dcgate.context.prepared(statement, values)),
      journalDir: dir, deadLetterDir: `${dir}-dead-letter`, flushSize: 1000, flushIntervalMs: 60_000, logger, onError: (error) => void errors.push(error),
    })
    await writer.start()
    await writer.add(batch('retry-1'))
    await writer.flush()
    expect(errors).toHaveLength(1)
    expect(readdirSync(dir).some((file) => statSync(join(dir, file)).size > 0)).toBe(true)
    await writer.add(batch('retry-1', 2))
    await writer.add(batch('retry-2'))
    failing = false
    await writer.flush()
    expect(await pages('retry-1')).toBe(3)
    expect(await pages('retry-2')).toBe(1)
    await writer.stop()
    expect(readdirSync(dir)).toEqual([])
  })

  it('a batch written twice (a replay after the commit) counts each hit once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'))
    const writer = writerIn(dir)
    await writer.start()
    const twice = batch('twice-1', 2)
    await writer.add(twice)
    await writer.flush()
    await writer.add(twice)
    await writer.flush()
    expect(await pages('twice-1')).toBe(2)
    await writer.stop()
  })
})
