import pg from 'pg'
import type { MikroORM } from '@mikro-orm/postgresql'
import { withoutQueryLimit } from './timeouts.ts'

/** Arbitrary but fixed: the advisory lock every dcgate instance takes before migrating. */
const MIGRATION_LOCK = 740_221_301

/**
 * Applies pending migrations and returns their names. On PostgreSQL a session advisory lock on a
 * separate connection makes concurrent starts safe: the second instance waits, then finds nothing
 * pending. The embedded database belongs to one process, so it needs no lock. Migrations run without the
 * client-side query limit (an index on a big table takes its time); opening the lock connection is bounded.
 */
export async function migrate(orm: MikroORM, lockUrl?: string, connectTimeoutMs = 10_000): Promise<string[]> {
  const run = () => withoutQueryLimit(orm, async () => (await orm.getMigrator().up()).map((m) => m.name))
  if (!lockUrl) return run()
  const lock = new pg.Client({ connectionString: lockUrl, connectionTimeoutMillis: connectTimeoutMs, keepAlive: true })
  await lock.connect()
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK])
    return await run()
  }
  finally {
    await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {})
    await lock.end()
  }
}
