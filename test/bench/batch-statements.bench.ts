// What the intake's insert and the attempt's record cost per conversion as their batch grows. Under load each carries
// everything that gathered while the one before it ran (a record: hundreds of conversions), so a statement whose work
// grows faster than its batch costs most exactly when the server is busiest. Stores BENCH_PREFILL conversions first
// (default 10,000, each with eight sent deliveries), then for each batch size times one insert of that many
// conversions whose eight deliveries an inline attempt holds, and the one record that settles them all (one
// connection, nothing else running).
// Run: npm run bench:batch-statements (needs PostgreSQL at BENCH_DATABASE_URL, like the other benches).
import pg from 'pg'
import { insertConversions, type NewConversion } from '../../core/delivery/queries/intake.ts'
import { recordAttempt, type AttemptUpdate } from '../../core/delivery/queries/outbox.ts'
import type { ConversionRow } from '../../core/delivery/rows.ts'
import type { RunPrepared } from '../../core/db/prepared.ts'
import { PLATFORMS } from '../fakes/all-platforms.ts'
import { PG_URL, freshPostgres, loadAverage, startDcgate } from './support.ts'

const PREFILL = Number(process.env.BENCH_PREFILL ?? 10_000)
const SIZES = [25, 100, 400, 1600]
const ROUNDS = 3

const database = await freshPostgres()
if (!database) {
  console.log(`PostgreSQL at ${PG_URL} unreachable: nothing measured`)
  process.exit(0)
}
try {
  // The schema, as dcgate's migrations make it.
  const dcgate = await startDcgate({ plugins: [], sites: [{ id: 'shop', name: 'Shop', domains: ['shop.example'] }] }, database.url)
  await dcgate.stop()
  dcgate.remove()
  // Without JIT, as dcgate connects (core/db/orm.ts): compiling the plan of a large record cost more than running it.
  const client = new pg.Client({ connectionString: database.url, options: '-c jit=off' })
  await client.connect()
  // Unnamed statements, planned for each call's values: the same plan for every batch size, whatever the statement's
  // generic plan would be.
  const prepared: RunPrepared = async <R extends object>(statement: { text: string }, values: readonly unknown[]) => (await client.query({ text: statement.text, values: [...values] })).rows as R[]
  try {
    let n = 0
    const store = async (count: number, perStatement = 50) => {
      const stored = []
      for (let i = 0; i < count; i += perStatement) {
        const items = Array.from({ length: Math.min(perStatement, count - i) }, () => newConversion(`m-${n++}`))
        stored.push(...(await insertConversions(prepared, items)).map((row) => row!))
      }
      return stored
    }
    const settle = (stored: Awaited<ReturnType<typeof store>>) => recordAttempt(prepared, stored.flatMap((row) => row.deliveries.map((d) => sent(d, row.conversionId))))
    for (let i = 0; i < PREFILL; i += 500) await settle(await store(Math.min(500, PREFILL - i)))
    await client.query('vacuum analyze conversions, deliveries')
    console.log(`insert and record statements, ${PREFILL} conversions stored first, eight deliveries each; load average ${loadAverage()}`)
    console.log('conversions in the statement   insert ms (rounds)              ms/conv   record ms (rounds)              ms/conv (best)')
    for (const size of SIZES) {
      const inserts: number[] = []
      const records: number[] = []
      for (let round = 0; round < ROUNDS; round++) {
        let started = performance.now()
        const stored = await store(size, size)
        inserts.push(performance.now() - started)
        started = performance.now()
        await settle(stored)
        records.push(performance.now() - started)
      }
      const column = (times: number[]) => `${times.map((t) => t.toFixed(1)).join(' / ').padEnd(30)}   ${(Math.min(...times) / size).toFixed(3).padStart(7)}`
      console.log(`${String(size).padStart(29)}   ${column(inserts)}   ${column(records)}`)
    }
  }
  finally {
    await client.end()
  }
}
finally {
  await database.drop()
}

function newConversion(messageId: string): NewConversion {
  const conversion = {
    site_id: 'shop', message_id: messageId, trust: 'trusted', source: 'automation', source_event_type: 'automation', event: 'Purchase',
    standard_event: 'Purchase', state: 'accepted', occurred_at: new Date(), value: 42.5, currency: 'USD', order_id: messageId, channel: 'online',
    items: [], identity: { email: 'a'.repeat(64) }, click_ids: { gclid: `Cj0-${messageId}` }, user_id: null, anonymous_id: null, session_id: null,
    page_url: 'https://shop.example/', ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (bench)', consent: 'unknown', is_bot: false, confirmation: 'tracked',
    country: null, content_name: null, content_category: null, held_email: null, clear_traits: null, consent_purposes: { rule: 'none' },
  } as unknown as ConversionRow
  return { conversion, delivery: { status: 'pending', error: null, attempts: 1, locked_until: 60, next_attempt_at: 0 } as NewConversion['delivery'], providers: [...PLATFORMS], inline: PLATFORMS.map(() => true) }
}

function sent(delivery: { id: string, provider: string }, conversionId: string): AttemptUpdate {
  return { id: delivery.id, conversion_id: conversionId, provider: delivery.provider, held: true, status: 'sent', attempts: 1, http_status: 200, error: null, duration_ms: 5, next_attempt_at: null, sent_at: new Date().toISOString() }
}
