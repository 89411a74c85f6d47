import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createConsola, type LogObject } from 'consola'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { PendingRows } from '../../plugins/capture/store/pending.ts'
import type { CaptureBatch, PageEventRow } from '../../plugins/capture/store/rows.ts'
import { createCaptureWriter, type CaptureWriterOptions } from '../../plugins/capture/store/writer.ts'
import type { RunPrepared } from '../../core/db/prepared.ts'

// Rows PostgreSQL refuses never stop the capture writer: handed to it directly (below the HTTP checks), they are
// set aside in the dead-letter directory and every other row of the same flush, and of later ones, is stored.
let app: TestApp
beforeAll(async () => {
  app = await bootTestApp({ plugins: [] })
})
afterAll(() => app?.close())

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const pages = async (session: string) => (await sql<{ page_count: number }[]>('select page_count from visits where session_id = ?', [session]))[0]?.page_count
const stored = async (id: string) => (await sql<{ id: string }[]>('select id from page_events where id = ?', [id])).length === 1

/** A logger that keeps what it was asked to print. */
function recordingLogger() {
  const lines: string[] = []
  const logger = createConsola({ level: 5, reporters: [{ log: (entry: LogObject) => void lines.push(entry.args.map(String).join(' ')) }] })
  return { logger, lines }
}

function writerIn(dir: string, more: Partial<CaptureWriterOptions> = {}) {
  const { logger, lines } = recordingLogger()
  const errors: unknown[] = []
  const writer = createCaptureWriter({
    prepared: app.dcgate.context.prepared, journalDir: join(dir, 'journal'), deadLetterDir: join(dir, 'dead-letter'),
    flushSize: 1000, flushIntervalMs: 60_000, logger, onError: (error) => void errors.push(error), ...more,
  })
  return { writer, lines, errors }
}

function event(session: string | null, more: Partial<PageEventRow> = {}): PageEventRow {
  const at = Date.now()
  return { id: randomUUID(), site_id: 'demo', session_id: session, kind: 'pageview', name: null, url: 'https://shop.example/', referrer: null, title: null, props: null, occurred_at: at, received_at: at, ...more }
}

function batch(session: string, pageCount = 1): CaptureBatch {
  const at = Date.now()
  return {
    events: Array.from({ length: pageCount }, () => event(session)),
    visit: {
      site_id: 'demo', session_id: session, visitor_id: 'v-1', started_at: at, ended_at: at, ip_address: '203.0.113.77', user_agent: 'UA', country: 'DE',
      city: null, isp: null, organization: null, asn: null, is_vpn: false, is_proxy: false, is_tor: false, is_hosting: false, platform: 'desktop',
      browser: null, os: null, is_bot: false, bot_reasons: [], referrer: null, landing_url: 'https://shop.example/', click_ids: { gclid: session }, consent: 'unknown', device_hash: null, gpc: false, consent_purposes: null,
    },
  }
}

/** The dead-letter entries written so far. */
function deadLetters(dir: string): { table: string, code: string, reason: string, row: unknown }[] {
  const letters = join(dir, 'dead-letter')
  return readdirSync(letters).filter((f) => f.endsWith('.ndjson'))
    .flatMap((f) => readFileSync(join(letters, f), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { table: string, code: string, reason: string, row: unknown }))
}

/** A dead process's journal segment holding these lines. */
function orphanSegment(dir: string, lines: readonly string[], name = `999999990-${Date.now()}-1`): string {
  const journal = join(dir, 'journal')
  const segment = join(journal, `${name}.ndjson`)
  mkdirSync(journal, { recursive: true })
  writeFileSync(segment, lines.join(''))
  return segment
}
/** Journal lines as the writer writes them, one per batch. */
function journalLines(batches: readonly CaptureBatch[]): string[] {
  const rows = new PendingRows()
  return batches.map((b) => {
    rows.add(b)
    return Buffer.concat(rows.journalLine()).toString('utf8')
  })
}

describe('capture writer with rows the database refuses', () => {
  it('sets the refused rows aside and stores every other row of the flush, and of later flushes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poison-'))
    const { writer, lines } = writerIn(dir)
    await writer.start()
    const good = batch('poison-good-1', 2)
    // A NUL in a URL and an unpaired surrogate in props: jsonb refuses both (the /collect body of issue 15).
    const nul = batch('poison-nul-1', 2)
    nul.events[0]!.url = 'https://shop.example/\u0000secret@example.com'
    const surrogate = event(null, { kind: 'event', name: 'clicked', props: { label: '\ud800' } })
    const fine = event(null)
    // A visit whose session id is longer than its column: the visit is refused, its page views are still stored.
    const long = batch('x'.repeat(200), 1)
    const after = batch('poison-good-2', 1)
    for (const b of [good, nul, { events: [surrogate, fine] }, long, after]) await writer.add(b)
    await writer.flush()

    expect(await pages('poison-good-1')).toBe(2)
    expect(await pages('poison-good-2')).toBe(1)
    expect(await pages('poison-nul-1')).toBe(1) // its other page view, counted on its visit
    expect(await stored(nul.events[0]!.id)).toBe(false)
    expect(await stored(nul.events[1]!.id)).toBe(true)
    expect(await stored(surrogate.id)).toBe(false)
    expect(await stored(fine.id)).toBe(true)

    const letters = deadLetters(dir)
    expect(letters.map((l) => `${l.table} ${l.code}`).sort()).toEqual(['page_events 22P02', 'page_events 22P05', 'page_events 22001', 'visits 22001'].sort())
    expect(letters.find((l) => l.code === '22P05')!.row).toContain('https://shop.example/\u0000secret@example.com')
    expect(writer.deadLettered).toBe(4)
    // The log says how many rows of which table and error, never what they held.
    const warning = lines.find((line) => line.includes('could not be stored'))!
    expect(warning).toMatch(/4 row\(s\).*page_events 22P05/)
    expect(lines.join('\n')).not.toMatch(/secret@example\.com|203\.0\.113\.77|shop\.example/)

    // The writer goes on: a later flush is written, and no journal is left behind.
    await writer.add(batch('poison-good-3', 3))
    await writer.flush()
    expect(await pages('poison-good-3')).toBe(3)
    await writer.stop()
    expect(readdirSync(join(dir, 'journal'))).toEqual([])
  })

  it('writes the same hit sent twice in one flush once (one statement cannot update a row twice)', async () => {
    const { writer } = writerIn(mkdtempSync(join(tmpdir(), 'poison-')))
    await writer.start()
    const first = batch('twice-in-flush-1', 1)
    const again: CaptureBatch = { events: [{ ...first.events[0]! }], visit: first.visit }
    await writer.add(first)
    await writer.add(again)
    await writer.add(batch('twice-in-flush-2', 1))
    await writer.flush()
    expect(await stored(first.events[0]!.id)).toBe(true)
    expect(await pages('twice-in-flush-2')).toBe(1)
    expect(writer.deadLettered).toBe(0)
    await writer.stop()
  })

  it('replays a dead process\'s journal past unreadable lines and refused rows, and boots', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poison-'))
    const poison = batch('replay-poison-1', 1)
    poison.events[0]!.title = 'A\u0000B'
    const [good, bad, later] = journalLines([batch('replay-good-1', 2), poison, batch('replay-good-2', 1)])
    orphanSegment(dir, [good!, '{"format":4,"e":5}\n', 'not json at all\n', bad!, later!, '{"format":4,"e":[["cut'])
    // A "segment" that cannot be read at all: moved aside whole.
    mkdirSync(join(dir, 'journal', '999999989-1-1.ndjson'))
    const { writer } = writerIn(dir)
    await writer.start()
    expect(await pages('replay-good-1')).toBe(2)
    expect(await pages('replay-good-2')).toBe(1)
    expect(await stored(poison.events[0]!.id)).toBe(false)
    expect(deadLetters(dir).map((l) => `${l.table} ${l.code}`).sort()).toEqual(['journal unreadable', 'journal unreadable', 'journal unreadable', 'journal unreadable', 'page_events 22P05'])
    expect(readdirSync(join(dir, 'journal')).filter((f) => f.startsWith('99999'))).toEqual([])
    expect(readdirSync(join(dir, 'dead-letter'))).toContain('999999989-1-1.segment')
    await writer.stop()
  })

  it('boots while the database refuses connections, and writes the journal once it is back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poison-'))
    orphanSegment(dir, journalLines([batch('replay-down-1', 2)]), '999999980-1-1')
    orphanSegment(dir, journalLines([batch('replay-down-2', 1)]), '999999980-1-2')
    let down = true
    let tries = 0
    const prepared: RunPrepared = (statement, values) => {
      tries++
      return down ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })) : app.dcgate.context.prepared(statement, values)
    }
    const { writer, errors } = writerIn(dir, { prepared })
    await writer.start()
    // One try: the second segment waits with the first rather than making boot wait for another failure.
    expect([tries, errors.length]).toEqual([1, 1])
    expect(await pages('replay-down-1')).toBeUndefined()
    down = false
    await writer.flush()
    expect(await pages('replay-down-1')).toBe(2)
    expect(await pages('replay-down-2')).toBe(1)
    await writer.stop()
    expect(readdirSync(join(dir, 'journal'))).toEqual([])
  })

  it('is full past maxPendingBytes while the database is away, and takes hits again once it caught up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poison-'))
    let down = true
    const prepared: RunPrepared = (statement, values) => (down ? Promise.reject(Object.assign(new Error('Connection terminated'), { code: '57P01' })) : app.dcgate.context.prepared(statement, values))
    const cap = 64 * 1024
    const { writer } = writerIn(dir, { prepared, maxPendingBytes: cap, flushSize: 5 })
    await writer.start()
    const accepted: string[] = []
    for (let i = 0; i < 1000 && !writer.full; i++) {
      const b = batch(`cap-${i}`, 1)
      b.events[0]!.url = `https://shop.example/${'p'.repeat(1000)}`
      await writer.add(b)
      accepted.push(b.events[0]!.id)
    }
    await writer.flush()
    expect(writer.full).toBe(true)
    // Bounded: the journal holds no more than the cap and the last request's line.
    const journalBytes = readdirSync(join(dir, 'journal')).reduce((sum, f) => sum + statSync(join(dir, 'journal', f)).size, 0)
    expect(journalBytes).toBeLessThan(cap + 4096)
    expect(accepted.length).toBeLessThan(cap / 1000)
    down = false
    await writer.flush()
    expect(writer.full).toBe(false)
    const rows = await sql<{ n: number }[]>(`select count(*)::int as n from page_events where id::text = any(string_to_array(?, ','))`, [accepted.join(',')])
    expect(rows[0]!.n).toBe(accepted.length)
    await writer.stop()
  })
})
