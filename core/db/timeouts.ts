import type { MigrationObject } from '@mikro-orm/core'
import type { MikroORM } from '@mikro-orm/postgresql'
import { Migration } from '@mikro-orm/migrations'

/** How long the database may take before dcgate gives up; `database.*TimeoutMs` in the config. */
export interface DatabaseTimeouts {
  /** Opening a connection (TCP, TLS and start-up). */
  connectTimeoutMs: number
  /** Waiting for a free connection of the pool. */
  acquireTimeoutMs: number
  /** PostgreSQL cancels a statement after this long; the client gives up on an unanswered one shortly after. */
  statementTimeoutMs: number
}

/**
 * The client waits this much longer than the server's statement timeout, so a slow statement on a database that
 * answers is cancelled by PostgreSQL (its connection stays usable), and only a silent database makes the client act.
 */
const CLIENT_GRACE_MS = 500
/** PostgreSQL ends a session left inside a transaction this long (a client that vanished mid-transaction). */
const IDLE_IN_TRANSACTION_MS = 60_000
/** First TCP keepalive probe after this much silence, so a connection whose peer is gone gets noticed. */
const KEEPALIVE_DELAY_MS = 10_000

/** Settings for each node-postgres client of the pool (knex's `connection`). */
export function connectionSettings(timeouts: DatabaseTimeouts | undefined): Record<string, unknown> {
  const tcp = { keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS }
  if (!timeouts) return tcp
  return {
    ...tcp,
    connectionTimeoutMillis: timeouts.connectTimeoutMs,
    // Sent as start-up parameters: the server enforces them even when the client cannot reach it any more.
    statement_timeout: timeouts.statementTimeoutMs,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
  }
}

interface PgClient {
  query: (...args: unknown[]) => unknown
  connection?: { stream?: { destroy: (error?: Error) => void } }
  __knex__disposed?: unknown
  /** This connection's client-side limit while a long statement runs on it (withLongerLimit), instead of the pool's. */
  dcgateLimitMs?: number
}

/** A query got no answer in time: its connection was closed, and the pool replaces it. */
export class DatabaseTimeoutError extends Error {
  override name = 'DatabaseTimeoutError'
  readonly code = 'DCGATE_DB_TIMEOUT'
}

interface Guard {
  /** Whether queries are limited at all (not on the embedded database). */
  limited: boolean
  /** knex's pool `afterCreate`: arms every query of a new connection. */
  afterCreate: (connection: PgClient, done: (error: Error | null, connection: PgClient) => void) => void
  /** Runs `work` with the client-side limit lifted (migrations may legitimately run for minutes). */
  unbounded: <T>(work: () => Promise<T>) => Promise<T>
}

const guards = new WeakMap<MikroORM, Guard>()

/**
 * A query still unanswered after the statement timeout and a grace ends its connection: the socket is destroyed,
 * the waiting query and any queued behind it fail at once, and knex's pool drops the connection on its next
 * acquire (it is marked disposed) instead of handing out one stuck behind a silent server. Without this,
 * node-postgres's own `query_timeout` answers the caller but keeps the connection waiting for the lost reply.
 */
export function createQueryGuard(timeouts: DatabaseTimeouts | undefined): Guard {
  const limitMs = timeouts ? timeouts.statementTimeoutMs + CLIENT_GRACE_MS : 0
  let lifted = 0
  const arm = (client: PgClient) => {
    if (!limitMs || lifted > 0) return () => {}
    let answered = false
    const timer = setTimeout(() => {
      // After a busy event loop the timer can fire with the answer already waiting in the socket: the poll phase
      // reads it before setImmediate runs, so only a query still unanswered then ends its connection.
      setImmediate(() => {
        if (answered) return
        const error = new DatabaseTimeoutError(`The database did not answer within ${limitMs} ms; the connection was closed`)
        // A string: knex logs it when it drops the connection, and would log the statement it adds to an error's message.
        client.__knex__disposed = error.message
        client.connection?.stream?.destroy(error)
      })
    }, client.dcgateLimitMs ?? limitMs)
    return () => {
      answered = true
      clearTimeout(timer)
    }
  }
  return {
    limited: limitMs > 0,
    afterCreate(connection, done) {
      const query = connection.query.bind(connection)
      connection.query = (...args: unknown[]) => {
        const disarm = arm(connection)
        const last = args.length - 1
        const callback = args[last]
        if (typeof callback === 'function') {
          args[last] = (...result: unknown[]) => {
            disarm()
            return (callback as (...a: unknown[]) => unknown)(...result)
          }
          return query(...args)
        }
        const returned = query(...args)
        if (returned instanceof Promise) return returned.finally(disarm)
        disarm() // a submittable (stream): it manages its own lifetime
        return returned
      }
      done(null, connection)
    },
    async unbounded(work) {
      lifted += 1
      try {
        return await work()
      }
      finally {
        lifted -= 1
      }
    },
  }
}

export function registerQueryGuard(orm: MikroORM, guard: Guard): void {
  guards.set(orm, guard)
}

/** A pooled node-postgres client, as far as withLongerLimit uses it. */
interface LimitableConnection {
  query(config: { text: string, values: unknown[] }): Promise<unknown>
  dcgateLimitMs?: number
}

/** Whether `orm`'s queries run under the database.*TimeoutMs limits (PostgreSQL; not the embedded database). */
export function queriesLimited(orm: MikroORM): boolean {
  return guards.get(orm)?.limited ?? false
}

/**
 * Runs `work` on `connection` with `ms` as its statement timeout, on the server and in the client, then gives the
 * connection its usual limit back: for a background statement that may scan a large table (an erasure, a
 * retention delete), where the request path's few seconds would fail it every time.
 */
export async function withLongerLimit<T>(connection: LimitableConnection, ms: number, work: () => Promise<T>): Promise<T> {
  await connection.query({ text: "select set_config('statement_timeout', $1, false)", values: [String(ms)] })
  connection.dcgateLimitMs = ms + CLIENT_GRACE_MS
  try {
    return await work()
  }
  finally {
    delete connection.dcgateLimitMs
    // RESET goes back to the session's start-up value (database.statementTimeoutMs).
    await connection.query({ text: 'reset statement_timeout', values: [] })
  }
}

/** Runs `work` on `orm` without the client-side query limit (see createQueryGuard). */
export function withoutQueryLimit<T>(orm: MikroORM, work: () => Promise<T>): Promise<T> {
  const guard = guards.get(orm)
  return guard ? guard.unbounded(work) : work()
}

/** Each migration lifts the server's statement timeout for its own transaction: an index on a big table takes time. */
export function withoutStatementTimeout(list: readonly MigrationObject[]): MigrationObject[] {
  return list.map(({ name, class: Base }) => {
    const Bounded = Base as unknown as new (...args: ConstructorParameters<typeof Migration>) => Migration
    const up = (Bounded.prototype as Migration).up
    class Unbounded extends Bounded {
      override async up(): Promise<void> {
        this.addSql('set local statement_timeout = 0')
        await up.call(this)
      }
    }
    return { name, class: Unbounded as unknown as MigrationObject['class'] }
  })
}
