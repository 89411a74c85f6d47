import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sweepInlineAttempts } from '../../core/delivery/queries/inline.ts'
import { insertConversions } from '../../core/delivery/queries/intake.ts'
import { recordAttempt, type AttemptUpdate } from '../../core/delivery/queries/outbox.ts'
import type { ConversionRow } from '../../core/delivery/rows.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

// The deliveries of an inline attempt are held by their conversion and written once, by the attempt's record. What a
// reader sees meanwhile, and what the worker's sweep does for an attempt whose process died before its record.
let app: TestApp
beforeAll(async () => {
  app = await bootTestApp({ plugins: [] })
})
afterAll(async () => {
  await app?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const prepared = () => app.dcgate.context.prepared

const conversion = (messageId: string): ConversionRow => ({
  site_id: 'demo', message_id: messageId, trust: 'trusted', source: 'automation', source_event_type: 'automation', event: 'Purchase',
  standard_event: 'Purchase', state: 'accepted', occurred_at: new Date(), value: 42.5, currency: 'USD', order_id: messageId, channel: 'online',
  items: [], identity: { email: 'a'.repeat(64) }, click_ids: { gclid: 'Cj0-test' }, user_id: null, anonymous_id: null, session_id: null,
  page_url: 'https://demo.example/', ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (test)', consent: 'unknown', is_bot: false, confirmation: 'tracked',
  country: null, content_name: null, content_category: null, held_email: null, us_privacy: undefined, clear_traits: null, consent_purposes: { rule: 'none' },
} as ConversionRow)

/** Stores a conversion whose deliveries to meta and x the inline attempt claims, and one to tiktok left to the worker. */
async function store(messageId: string) {
  const [stored] = await insertConversions(prepared(), [{
    conversion: conversion(messageId), delivery: { status: 'pending', error: null, attempts: 1, locked_until: 60, next_attempt_at: 0 },
    providers: ['meta', 'x', 'tiktok'], inline: [true, true, false],
  }])
  return stored!
}

const sent = (d: { id: string, provider: string }, conversionId: string): AttemptUpdate => ({
  id: d.id, conversion_id: conversionId, provider: d.provider, held: true, status: 'sent', attempts: 1, http_status: 200, error: null,
  duration_ms: 5, next_attempt_at: null, sent_at: new Date().toISOString(),
})

const states = (conversionId: string, from = 'deliveries') => sql<{ id: string, provider: string, status: string, attempts: number }[]>(
  `select id, provider, status, attempts from ${from} where conversion_id = ? order by provider`, [conversionId])
const held = async (conversionId: string) => (await sql<{ inline_until: string | null, inline_deliveries: unknown, ip: string | null }[]>(
  'select inline_until, inline_deliveries, ip from conversions where id = ?', [conversionId]))[0]!

describe('deliveries an inline attempt holds', () => {
  it('are rows only once recorded; until then the conversion holds them and all_deliveries shows them pending', async () => {
    const stored = await store('held-1')
    const [meta, x, tiktok] = stored.deliveries
    expect(stored.deliveries.map((d) => [d.provider, d.held])).toEqual([['meta', true], ['x', true], ['tiktok', false]])
    // Only the worker's delivery is a row; the two being attempted are held, with the lease's end.
    expect(await states(stored.conversionId)).toEqual([{ id: tiktok!.id, provider: 'tiktok', status: 'pending', attempts: 0 }])
    expect((await held(stored.conversionId)).inline_until).not.toBeNull()
    expect(await states(stored.conversionId, 'all_deliveries')).toEqual([
      { id: meta!.id, provider: 'meta', status: 'pending', attempts: 1 },
      { id: tiktok!.id, provider: 'tiktok', status: 'pending', attempts: 0 },
      { id: x!.id, provider: 'x', status: 'pending', attempts: 1 },
    ])

    // One recorded: its row is written sent; the conversion still holds the other.
    await recordAttempt(prepared(), [sent(meta!, stored.conversionId)])
    expect((await states(stored.conversionId)).map((d) => [d.provider, d.status])).toEqual([['meta', 'sent'], ['tiktok', 'pending']])
    expect((await held(stored.conversionId)).inline_until).not.toBeNull()

    // The other recorded: the conversion lets go of them. IP stays: tiktok's delivery is still to be attempted.
    await recordAttempt(prepared(), [sent(x!, stored.conversionId)])
    expect((await states(stored.conversionId)).map((d) => [d.provider, d.status])).toEqual([['meta', 'sent'], ['tiktok', 'pending'], ['x', 'sent']])
    expect(await held(stored.conversionId)).toEqual({ inline_until: null, inline_deliveries: null, ip: '203.0.113.7' })
    expect(await states(stored.conversionId, 'all_deliveries')).toEqual(await states(stored.conversionId))
  })

  it('clears IP and user agent in the record that settles the last of them', async () => {
    const [stored] = await insertConversions(prepared(), [{
      conversion: conversion('held-2'), delivery: { status: 'pending', error: null, attempts: 1, locked_until: 60, next_attempt_at: 0 },
      providers: ['meta', 'x'], inline: [true, true],
    }])
    await recordAttempt(prepared(), stored!.deliveries.map((d) => sent(d, stored!.conversionId)))
    expect(await held(stored!.conversionId)).toEqual({ inline_until: null, inline_deliveries: null, ip: null })
  })

  it('of a process that died are written pending by the sweep once the lease has passed, with their ids; a late record still lands', async () => {
    const stored = await store('held-3')
    const [meta, x] = stored.deliveries
    await recordAttempt(prepared(), [sent(meta!, stored.conversionId)])
    // Not yet: the lease runs.
    expect(await sweepInlineAttempts(prepared(), 100)).toBe(0)
    await sql(`update conversions set inline_until = now() - interval '1 second' where id = ?`, [stored.conversionId])
    expect(await sweepInlineAttempts(prepared(), 100)).toBe(1)
    // The recorded one keeps its row; the one cut short is pending, its attempt counted, for the worker to claim.
    expect(await states(stored.conversionId)).toEqual([
      { id: meta!.id, provider: 'meta', status: 'sent', attempts: 1 },
      { id: stored.deliveries[2]!.id, provider: 'tiktok', status: 'pending', attempts: 0 },
      { id: x!.id, provider: 'x', status: 'pending', attempts: 1 },
    ])
    expect((await held(stored.conversionId)).inline_until).toBeNull()
    expect(await sweepInlineAttempts(prepared(), 100)).toBe(0)
    // The attempt ended after all (a slow platform, not a dead process): its record updates the row the sweep wrote.
    await recordAttempt(prepared(), [sent(x!, stored.conversionId)])
    expect((await states(stored.conversionId)).map((d) => [d.provider, d.status])).toEqual([['meta', 'sent'], ['tiktok', 'pending'], ['x', 'sent']])
  })

  it('write nothing for a conversion no longer there', async () => {
    const stored = await store('held-4')
    await sql('delete from deliveries where conversion_id = ?', [stored.conversionId])
    await sql('delete from conversions where id = ?', [stored.conversionId])
    await recordAttempt(prepared(), stored.deliveries.slice(0, 2).map((d) => sent(d, stored.conversionId)))
    expect(await states(stored.conversionId)).toEqual([])
  })
})
