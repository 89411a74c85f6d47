import type { RunPrepared } from '../../../core/db/prepared.ts'

/** Runs one statement ($1…$n placeholders) and returns its rows: a one-off statement, or one inside a transaction. */
export type Sql = <R extends object>(text: string, values: readonly unknown[]) => Promise<R[]>

/** An erasure scans a site's free text (URLs, properties): on a large site that takes longer than a request may. */
const ERASE_STATEMENT_MS = 300_000

/** Deletion requests are rare, so their statements are planned per call (unnamed), with the erasure's timeout. */
export function oneOff(prepared: RunPrepared): Sql {
  return <R extends object>(text: string, values: readonly unknown[]) => prepared<R>({ name: '', text, reusePlan: false, timeoutMs: ERASE_STATEMENT_MS }, values)
}
