import { DatabaseTimeoutError } from './timeouts.ts'

/** Rolled back for another transaction (class 40: deadlock, serialization failure) or a connection failure (08). */
const RETRYABLE_CLASS = /^(?:40|08)[0-9A-Z]{3}$/
/** Shutting down, crashed, starting up (57P01–57P03); too many connections (53300). */
const RETRYABLE_CODES = new Set(['57P01', '57P02', '57P03', '53300', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT'])
/** node-postgres's and knex's words for a connection lost or never had (they carry no code). */
const CONNECTION_LOST = /Connection terminated|not queryable|Timeout acquiring a connection/i

/**
 * Whether a statement that failed with `error` may succeed when run again as it is: its transaction was rolled back
 * for another one, the connection failed, the server was restarting, or it did not answer in time (the query guard
 * closed the connection). An error in the statement or its values is not: it would fail again.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  if (error instanceof DatabaseTimeoutError) return true
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && (RETRYABLE_CLASS.test(code) || RETRYABLE_CODES.has(code))) return true
  return CONNECTION_LOST.test(error.message)
}

/**
 * Runs `statement`; while it fails transiently, runs it again after each pause of `pausesMs` in turn. Throws the last
 * failure, or at once one that is not transient. Only for a statement that may run twice (idempotent), since a lost
 * connection can hide a commit.
 */
export async function retryTransient<T>(statement: () => Promise<T>, pausesMs: readonly number[]): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await statement()
    }
    catch (error) {
      const pause = pausesMs[attempt]
      if (pause === undefined || !isTransientDatabaseError(error)) throw error
      await new Promise((resolve) => setTimeout(resolve, pause))
    }
  }
}
