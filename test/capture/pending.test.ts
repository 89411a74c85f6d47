import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { batchesOfLine, PendingRows } from '../../plugins/capture/store/pending.ts'
import { mergeVisit, type CaptureBatch, type PageEventRow, type VisitRow } from '../../plugins/capture/store/rows.ts'

// The rows waiting for a flush are kept as bytes: the statement's parameters and the journal lines are read from
// them. Whatever text the rows hold, and however many requests arrive between journal lines, the parameters must
// hold each page event once and each visit once (merged), and the journal lines must give back the same rows.

/** Text beyond ASCII too: accents, CJK, emoji (surrogate pairs), line separators, quotes and backslashes. */
const text = fc.string({ unit: fc.constantFrom('a', 'Z', '9', ' ', 'é', 'ß', '東', '👋', '\u2028', '"', '\\', '/', '\n', '\u0000'), maxLength: 40 })
const session = fc.constantFrom('s-aaaaaaaa', 's-bbbbbbbb', 's-cccccccc')

const event = fc.record({ id: fc.uuid(), session_id: session, url: text, title: fc.option(text, { nil: null }), occurred_at: fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }) })
  .map(({ id, session_id, url, title, occurred_at }): PageEventRow => ({
    id, site_id: 'shop', session_id, kind: 'pageview', name: null, url, referrer: null, title, props: null, occurred_at, received_at: occurred_at,
  }))
const visit = fc.record({ session_id: session, user_agent: text, landing_url: fc.option(text, { nil: null }), gclid: fc.option(text, { nil: undefined }), started_at: fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 }) })
  .map(({ session_id, user_agent, landing_url, gclid, started_at }): VisitRow => ({
    site_id: 'shop', session_id, visitor_id: null, started_at, ended_at: started_at + 1000, ip_address: '203.0.113.9', user_agent, country: 'DE', city: null,
    isp: null, organization: null, asn: null, is_vpn: false, is_proxy: false, is_tor: false, is_hosting: false, platform: null, browser: null, os: null,
    is_bot: false, bot_reasons: [], referrer: null, landing_url, click_ids: gclid === undefined ? {} : { gclid }, consent: 'granted', device_hash: null, gpc: false, consent_purposes: null,
  }))
const batch = fc.record({ events: fc.array(event, { maxLength: 3 }), visit: fc.option(visit, { nil: undefined }) })
  .map(({ events, visit }): CaptureBatch => (visit ? { events, visit } : { events }))
/** Requests, with a journal line written after some of them (a turn of the event loop ending). */
const requests = fc.array(fc.record({ batch, lineAfter: fc.boolean() }), { minLength: 1, maxLength: 60 })

/** A jsonb parameter as sent: the version byte, then the JSON text. */
function parseParam(param: Buffer): unknown[][] {
  expect(param[0]).toBe(1)
  return JSON.parse(param.subarray(1).toString('utf8')) as unknown[][]
}

/** What the parameters should hold: every event, and per session the merge of its visits in arrival order. */
function expected(batches: readonly CaptureBatch[]): { events: PageEventRow[], visits: Map<string, VisitRow> } {
  const visits = new Map<string, VisitRow>()
  for (const b of batches) {
    if (!b.visit) continue
    const earlier = visits.get(b.visit.session_id)
    visits.set(b.visit.session_id, earlier ? mergeVisit(earlier, b.visit) : b.visit)
  }
  return { events: batches.flatMap((b) => b.events), visits }
}

describe('pending rows', () => {
  it('hold every event once and every visit once, merged, whatever the text', () => {
    fc.assert(fc.property(requests, (list) => {
      const rows = new PendingRows()
      for (const { batch: b } of list) rows.add(b)
      const want = expected(list.map((r) => r.batch))
      const { events, visits } = rows.params()
      expect(parseParam(events).map((values) => values[0])).toEqual(want.events.map((e) => e.id))
      expect(parseParam(events).map((values) => values[7])).toEqual(want.events.map((e) => e.title))
      const sent = parseParam(visits)
      expect(sent.map((values) => values[1]).sort()).toEqual([...want.visits.keys()].sort())
      for (const values of sent) {
        const merged = want.visits.get(values[1] as string)!
        expect({ ua: values[6], landing: values[22], clicks: values[23], started: values[3] }).toEqual({ ua: merged.user_agent, landing: merged.landing_url, clicks: merged.click_ids, started: merged.started_at })
      }
      expect(rows.hits).toBe(want.events.length)
      // A failed flush asks again: the same parameters.
      const again = rows.params()
      expect(parseParam(again.events)).toEqual(parseParam(events))
      expect(parseParam(again.visits)).toEqual(sent)
    }), { numRuns: 300 })
  })

  it('journal lines that give back the same rows when replayed', () => {
    fc.assert(fc.property(requests, (list) => {
      const rows = new PendingRows()
      const lines: string[] = []
      const writeLine = () => lines.push(Buffer.concat(rows.journalLine()).toString('utf8'))
      for (const { batch: b, lineAfter } of list) {
        rows.add(b)
        if (lineAfter) writeLine()
      }
      writeLine()
      expect(lines.every((line) => line.endsWith('}\n') && !line.slice(0, -1).includes('\n'))).toBe(true)
      const replayed = new PendingRows()
      for (const line of lines) for (const b of batchesOfLine(JSON.parse(line))) replayed.add(b)
      expect(parseParam(replayed.params().events)).toEqual(parseParam(rows.params().events))
      const byKey = (param: Buffer) => parseParam(param).sort((a, b) => String(a[1]).localeCompare(String(b[1])))
      expect(byKey(replayed.params().visits)).toEqual(byKey(rows.params().visits))
    }), { numRuns: 300 })
  })

  it('read back only lines of the journal format: a line of another shape is refused, not guessed at', () => {
    const rows = new PendingRows()
    rows.add({ events: [{ id: '00000000-0000-7000-8000-000000000001', site_id: 'shop', session_id: null, kind: 'pageview', name: null, url: 'https://shop.example/', referrer: null, title: null, props: null, occurred_at: 1, received_at: 1 }] })
    const line = JSON.parse(Buffer.concat(rows.journalLine()).toString('utf8')) as Record<string, unknown>
    expect(batchesOfLine(line).flatMap((b) => b.events.map((e) => e.url))).toEqual(['https://shop.example/'])
    // Shapes no release wrote (an unversioned line of value arrays, a row as an object) go to the dead letter as unreadable.
    expect(() => batchesOfLine({ e: line.e, v: null, w: null })).toThrow(/format 4/)
    expect(() => batchesOfLine({ events: [] })).toThrow(/format 4/)
    expect(() => batchesOfLine({ ...line, format: 5 })).toThrow(/format 4/)
  })

  it('grow past their first buffer without losing bytes', () => {
    const rows = new PendingRows()
    const long = '東'.repeat(2000)
    const batches = Array.from({ length: 50 }, (_, i): CaptureBatch => ({
      events: [{ id: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`, site_id: 'shop', session_id: null, kind: 'pageview', name: null, url: long, referrer: null, title: `${i}`, props: null, occurred_at: i, received_at: i }],
    }))
    for (const b of batches) rows.add(b)
    const sent = parseParam(rows.params().events)
    expect(sent).toHaveLength(50)
    expect(sent.every((values, i) => values[5] === long && values[7] === `${i}`)).toBe(true)
  })

  it('send each of thousands of visits once, merged, when they come back in another order', () => {
    const rows = new PendingRows()
    const base = fc.sample(visit, { numRuns: 1, seed: 7 })[0]!
    const visitOf = (i: number, round: number): VisitRow => ({ ...base, session_id: `s-${i}`, user_agent: `ua-${round}`, started_at: 1_700_000_000_000 + i, ended_at: 1_700_000_000_000 + i + round })
    const count = 2500
    for (let i = 0; i < count; i++) rows.add({ events: [], visit: visitOf(i, 1) })
    for (let i = count - 1; i >= 0; i -= 2) rows.add({ events: [], visit: visitOf(i, 2) })
    const sent = parseParam(rows.params().visits)
    expect(sent).toHaveLength(count)
    const seen = new Map(sent.map((values) => [values[1] as string, values]))
    expect(seen.size).toBe(count)
    for (let i = 0; i < count; i++) {
      const merged = i % 2 === 1 ? mergeVisit(visitOf(i, 1), visitOf(i, 2)) : visitOf(i, 1)
      expect({ ua: seen.get(`s-${i}`)![6], ended: seen.get(`s-${i}`)![4] }).toEqual({ ua: merged.user_agent, ended: merged.ended_at })
    }
  })
})
