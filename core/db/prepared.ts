import type { MikroORM } from '@mikro-orm/postgresql'
import { createPlanGenerations, READ_PAGES_SQL } from './plan-generations.ts'
import { queriesLimited, withLongerLimit } from './timeouts.ts'

/** A statement run often enough that its parse and plan are worth keeping: SQL with $1…$n placeholders. */
export interface PreparedStatement {
  /** Unique per SQL text; PostgreSQL keeps the prepared statement per connection under this name. */
  name: string
  text: string
  /**
   * false: parse and plan on every call (an unnamed statement), for a statement whose best plan depends on its
   * arguments or on table sizes that change fast. A named statement's generic plan is fixed per connection until
   * statistics change, so one made while a table was nearly empty can keep scanning it as it grows.
   */
  reusePlan?: boolean
  /**
   * The tables whose size the statement's best plan depends on. Its plan is reused while they stay within a factor
   * of two of the size it was made at, and made again when one doubles (plan-generations.ts). Implies reusePlan.
   */
  planFollows?: readonly string[]
  /**
   * A background statement that may scan a large table (an erasure, a retention delete): its own statement timeout
   * in ms instead of `database.statementTimeoutMs`, which is kept short so a stalled database fails requests fast.
   */
  timeoutMs?: number
}

/** Runs a prepared statement and returns its rows. */
export type RunPrepared = <R extends object>(statement: PreparedStatement, values: readonly unknown[]) => Promise<R[]>

interface PgClient { query: (config: { name?: string, text: string, values: unknown[] }) => Promise<{ rows: unknown[] }> }
interface KnexClient { acquireConnection: () => Promise<PgClient>, releaseConnection: (connection: PgClient) => Promise<void> }

/**
 * The intake's hottest statements, run as named prepared statements on a connection of MikroORM's own pool.
 * On PGlite (the embedded database, or any PGlite served over a socket) they run unnamed: PGlite has one session
 * that every socket client shares, so a statement one client prepared would already exist for the next.
 * Measured with pg_stat_statements under the conversions benchmark: planning took longer than execution for
 * each of them (0.1–0.23 ms a call), and knex's per-query work showed in the server's profile. Values are
 * converted by node-postgres (Dates, JSON, JS arrays as PostgreSQL arrays).
 */
export async function createPreparedRunner(orm: MikroORM): Promise<RunPrepared> {
  const [server] = await orm.em.getConnection().execute<{ version: string }[]>('select version() as version')
  const named = !server?.version.includes('PGlite')
  const database = orm.em.getConnection()
  const limited = queriesLimited(orm)
  const generations = createPlanGenerations(async (tables) => {
    const rows = await run<{ pages: number }>({ name: '', text: READ_PAGES_SQL, reusePlan: false }, [tables])
    return rows.map((row) => row.pages)
  })
  const nameOf = (statement: PreparedStatement): string | undefined => {
    if (!named) return undefined
    if (statement.planFollows) return generations.nameFor(statement.name, statement.planFollows)
    return statement.reusePlan === false ? undefined : statement.name
  }
  const run = async <R extends object>(statement: PreparedStatement, values: readonly unknown[]) => {
    // Looked up per call: a reconnect (orm.close, orm.connect) replaces knex's client and its pool.
    const client = database.getKnex().client as unknown as KnexClient
    const connection = await client.acquireConnection()
    try {
      const name = nameOf(statement)
      const query = () => connection.query({ ...(name ? { name } : {}), text: statement.text, values: [...values] })
      const result = limited && statement.timeoutMs ? await withLongerLimit(connection, statement.timeoutMs, query) : await query()
      return result.rows as R[]
    }
    finally {
      await client.releaseConnection(connection)
    }
  }
  return run
}
