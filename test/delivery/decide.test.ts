import { describe, expect, it } from 'vitest'
import { decideDelivery } from '../../core/delivery/decide.ts'
import { facts } from './decide-facts.ts'
import { toDeliveryRow } from '../../core/delivery/rows.ts'
import { columnNames, recordsetOf, recordValueOf } from '../../core/db/columns.ts'

// The pure part of accepting a conversion: which platforms get an outbox row, which are skipped and why, and when.

describe('decideDelivery', () => {
  it('sends a mapped conversion to every platform of the site, before answering', () => {
    expect(decideDelivery(facts())).toEqual({
      state: 'accepted', standardEvent: 'Purchase', providers: ['meta', 'google_ads'], skipReason: undefined,
      sendable: true, inline: true, graceSeconds: 0, keepsBrowser: true, consent: { rule: 'none' },
    })
  })

  it('stores an unknown or unmapped event for no platform, without IP or browser', () => {
    for (const mapping of [{ kind: 'unknown' }, { kind: 'unmapped' }] as const) {
      expect(decideDelivery(facts({ mapping }))).toMatchObject({ state: 'unmapped', standardEvent: null, providers: [], sendable: false, inline: false, keepsBrowser: false })
    }
  })

  it('holds what a listener holds: no outbox rows, IP and browser kept for the release, no gate yet', () => {
    expect(decideDelivery(facts({ hold: true, match: { isBot: true, consent: 'denied' } }))).toMatchObject({
      state: 'held', providers: [], skipReason: undefined, sendable: false, inline: false, keepsBrowser: true,
    })
  })

  it('holds nothing by itself: a "when qualified" event nobody holds is sent', () => {
    expect(decideDelivery(facts({ mapping: { kind: 'mapped', standardEvent: 'Lead', release: 'when_qualified' } }))).toMatchObject({ state: 'accepted', sendable: true })
  })

  it('writes every row skipped, with the reason, for a bot or a denied consent', () => {
    expect(decideDelivery(facts({ match: { isBot: true, consent: 'granted' } }))).toMatchObject({
      state: 'accepted', providers: ['meta', 'google_ads'], skipReason: 'the matched visit was ruled a bot', sendable: false, inline: false, keepsBrowser: false,
    })
    expect(decideDelivery(facts({ match: { isBot: false, consent: 'denied' } }))).toMatchObject({ skipReason: 'the visitor denied consent', sendable: false })
  })

  it('sends nothing for a site without platforms', () => {
    expect(decideDelivery(facts({ platforms: [] }))).toMatchObject({ state: 'accepted', providers: [], sendable: false, inline: false, keepsBrowser: false })
  })

  it('lets a public conversion with a chosen id wait its grace, in the background; an id dcgate made waits none', () => {
    expect(decideDelivery(facts({ trust: 'public' }))).toMatchObject({ graceSeconds: 120, sendable: true, inline: false })
    expect(decideDelivery(facts({ trust: 'public', chosenId: false }))).toMatchObject({ graceSeconds: 0, inline: true })
  })

  it('leaves a background conversion to the worker', () => {
    expect(decideDelivery(facts({ deliver: 'background' }))).toMatchObject({ sendable: true, inline: false })
  })
})

describe('the outbox rows written with the conversion', () => {
  it('are claimed for the inline attempt (counted at once), skipped with the reason, or due after the grace', () => {
    expect(toDeliveryRow(decideDelivery(facts()), 30)).toEqual({ status: 'pending', error: null, attempts: 1, locked_until: 30, next_attempt_at: 0 })
    expect(toDeliveryRow(decideDelivery(facts({ match: { isBot: true, consent: 'unknown' } })), 30))
      .toEqual({ status: 'skipped', error: 'the matched visit was ruled a bot', attempts: 0, locked_until: null, next_attempt_at: 0 })
    expect(toDeliveryRow(decideDelivery(facts({ trust: 'public' })), 30)).toEqual({ status: 'pending', error: null, attempts: 0, locked_until: null, next_attempt_at: 120 })
  })
})

describe('a column list', () => {
  interface Row { name: string, tags: string[], due: number | null }
  const COLUMNS = [['name', 'text'], ['tags', 'jsonb'], ['due', 'seconds_from_now']] as const

  it('makes the insert\'s column names, the typed record its rows are read from, and each value\'s expression, in one order', () => {
    expect(columnNames<Row>(COLUMNS)).toBe('name, tags, due')
    expect(recordsetOf<Row>(COLUMNS, '$1', 'n int')).toBe('json_to_recordset($1::json) as x(name text, tags jsonb, due int, n int)')
    expect(COLUMNS.map((column) => recordValueOf<Row>(column))).toEqual(['x.name', 'x.tags', 'now() + make_interval(secs => x.due)'])
  })
})
