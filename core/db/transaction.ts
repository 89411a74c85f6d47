import type { MikroORM } from '@mikro-orm/postgresql'
import { queriesLimited, withLongerLimit } from './timeouts.ts'

/** One statement inside the transaction: `$1…$n` placeholders, as everywhere else; rows back. */
export type TransactionSql = <R extends object>(text: string, values: readonly unknown[]) => Promise<R[]>

interface PgClient { query: (config: { text: string, values: unknown[] }) => Promise<{ rows: unknown[] }> }
interface KnexClient { acquireConnection: () => Promise<PgClient>, releaseConnection: (connection: PgClient) => Promise<void> }

/**
 * Runs `work` in one transaction on one connection of MikroORM's pool (begin, commit, rollback), through
 * node-postgres as the prepared runner does, rather than with `em.transactional()`.
 * On Node 20, `em.transactional()` and `em.flush()` run an AsyncLocalStorage, and the first run turns on promise hooks
 * for the whole process, for good: every promise of every request then pays for them (about a tenth of the /collect
 * benchmark's server CPU). `test/core/async-context.test.ts` checks that serving and admin work never start one.
 */
export async function inTransaction<T>(orm: MikroORM, work: (sql: TransactionSql) => Promise<T>, options: { timeoutMs?: number } = {}): Promise<T> {
  const client = orm.em.getConnection().getKnex().client as unknown as KnexClient
  const connection = await client.acquireConnection()
  const run = async <R extends object>(text: string, values: readonly unknown[]) => (await connection.query({ text, values: [...values] })).rows as R[]
  const transaction = async () => {
    await run('begin', [])
    try {
      const result = await work(run)
      await run('commit', [])
      return result
    }
    catch (error) {
      await run('rollback', []).catch(() => {})
      throw error
    }
  }
  try {
    // A background transaction that may take longer than a request may (see PreparedStatement.timeoutMs).
    return options.timeoutMs && queriesLimited(orm) ? await withLongerLimit(connection, options.timeoutMs, transaction) : await transaction()
  }
  finally {
    await client.releaseConnection(connection)
  }
}
