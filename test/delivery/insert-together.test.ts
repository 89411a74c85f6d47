import { describe, expect, it } from 'vitest'
import type { PreparedStatement } from '../../core/db/prepared.ts'
import { insertTogether, type NewConversion } from '../../core/delivery/queries/intake.ts'
import type { ConversionRow } from '../../core/delivery/rows.ts'

/** A conversion as the intake hands it to the insert; only the fields the grouping reads matter here. */
const item = (messageId: string, trust: 'trusted' | 'public' = 'trusted'): NewConversion => ({
  conversion: { site_id: 'shop', message_id: messageId, trust } as ConversionRow,
  delivery: { status: 'pending', error: null, attempts: 1, locked_until: 60, next_attempt_at: 0 },
  providers: ['meta'], inline: [true],
})

/**
 * Stands in for PostgreSQL: stores each distinct id once (a repeat inserts nothing, as ON CONFLICT DO NOTHING), and
 * refuses, for its data, any statement carrying an id that contains "bad".
 */
function database() {
  const stored = new Set<string>()
  const statements: string[][] = []
  const prepared = async <R extends object>(_statement: PreparedStatement, values: readonly unknown[]): Promise<R[]> => {
    const records = JSON.parse(values[0] as string) as { n: number, message_id: string, trust: string }[]
    statements.push(records.map((r) => r.message_id))
    if (records.some((r) => r.message_id.includes('bad'))) throw Object.assign(new Error('invalid input syntax'), { code: '22P02' })
    return records.flatMap((r) => {
      const key = `${r.trust}:${r.message_id}`
      if (stored.has(key)) return []
      stored.add(key)
      return [{ n: r.n, conversion_id: `c-${key}`, id: `d-${key}`, provider: 'meta', held: true } as unknown as R]
    })
  }
  return { prepared, statements }
}

describe('conversions stored together', () => {
  it('go in one statement, each answered with its own rows, a stored id as a duplicate', async () => {
    const db = database()
    await insertTogether(db.prepared, [item('earlier')])
    const results = await insertTogether(db.prepared, [item('a'), item('earlier'), item('b', 'public')])
    expect(db.statements).toEqual([['earlier'], ['a', 'earlier', 'b']])
    expect(results).toEqual([
      { conversionId: 'c-trusted:a', deliveries: [{ id: 'd-trusted:a', provider: 'meta', held: true }] },
      null,
      { conversionId: 'c-public:b', deliveries: [{ id: 'd-public:b', provider: 'meta', held: true }] },
    ])
  })

  it('one messageId twice in a trust tier is stored once; the second copy is the duplicate; another tier is its own', async () => {
    const db = database()
    const results = await insertTogether(db.prepared, [item('same'), item('same'), item('same', 'public')])
    expect(db.statements).toEqual([['same', 'same']])
    expect(results.map((r) => r && 'conversionId' in r ? r.conversionId : r)).toEqual(['c-trusted:same', null, 'c-public:same'])
  })

  it('refused for its data, each is stored alone: only the refused one fails', async () => {
    const db = database()
    const results = await insertTogether(db.prepared, [item('ok-1'), item('bad-1'), item('ok-2')])
    expect(db.statements).toEqual([['ok-1', 'bad-1', 'ok-2'], ['ok-1'], ['bad-1'], ['ok-2']])
    expect(results[0]).toMatchObject({ conversionId: 'c-trusted:ok-1' })
    expect((results[1] as { refused: { code: string } }).refused.code).toBe('22P02')
    expect(results[2]).toMatchObject({ conversionId: 'c-trusted:ok-2' })
  })

  it('a failure that is not about the data (the database away) fails them all, as it would each', async () => {
    const prepared = async () => {
      throw Object.assign(new Error('Connection terminated'), { code: 'ECONNRESET' })
    }
    await expect(insertTogether(prepared, [item('x'), item('y')])).rejects.toThrow('Connection terminated')
  })
})
