import type { RunPrepared } from '../../../core/db/prepared.ts'
import { withdrawVisits, writeHits } from '../queries.ts'
import { EMPTY_JSONB_ARRAY, type PendingRows } from './pending.ts'

/**
 * Writes a flush: its page events and visits in one statement, then its withdrawals. Bound parameters, not SQL text:
 * the JSON of a flush is large, and escaping it into the SQL cost more than sending it. The rows go as jsonb in
 * binary form, straight from the bytes they were collected in (pending.ts).
 */
export async function writeBatch(prepared: RunPrepared, rows: PendingRows): Promise<void> {
  const { events, visits, withdrawn } = rows.params()
  if (events !== EMPTY_JSONB_ARRAY || visits !== EMPTY_JSONB_ARRAY) await writeHits(prepared, events, visits)
  if (withdrawn) await withdrawVisits(prepared, withdrawn)
}
