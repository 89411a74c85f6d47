import type { MikroORM } from '@mikro-orm/postgresql'

/** One statement inside the transaction: `?` placeholders, rows back. */
export type TransactionSql = <T extends object[]>(text: string, params: unknown[]) => Promise<T>

/**
 * Runs `work` in one transaction, on the connection (begin, commit, rollback) rather than with `em.transactional()`.
 * On Node 20, `em.transactional()` and `em.flush()` run an AsyncLocalStorage, and the first run turns on promise hooks
 * for the whole process, for good: every promise of every request then pays for them (about a tenth of the /collect
 * benchmark's server CPU). `test/core/async-context.test.ts` checks that serving and admin work never start one.
 */
export async function inTransaction<T>(orm: MikroORM, work: (sql: TransactionSql) => Promise<T>): Promise<T> {
  const connection = orm.em.getConnection('write')
  const trx = await connection.begin()
  try {
    const result = await work((text, params) => connection.execute(text, params, 'all', trx))
    await connection.commit(trx)
    return result
  }
  catch (error) {
    await connection.rollback(trx).catch(() => {})
    throw error
  }
}
