import pg from 'pg'
import type { ConsolaInstance } from 'consola'
import { BootError } from '../errors.ts'
import { redact } from './orm.ts'

/** Arbitrary but fixed, beside the migration lock (740_221_301): held by every instance for its whole life. */
const PEER_LOCK = 740_221_302
/** After the lock's connection drops, it is taken again this often until it holds. */
const RETRY_MS = 5000

export interface PeerLockOptions {
  url: string
  /** This instance keeps its caches in Redis, shared with its peers. */
  sharedStorage: boolean
  /** server.allowMemoryStorageWithPeers: start anyway, with a warning. */
  allowPeers: boolean
  connectTimeoutMs: number
  queryTimeoutMs: number
  logger: ConsolaInstance
}

export interface PeerLock {
  close: () => Promise<void>
}

const WHY = 'with memory storage, a key deleted on one instance stays valid on the others for up to 5 minutes, and each counts its own rate limits'
const FIX = 'give every instance the same storage.url (Redis), or run one instance, or set server.allowMemoryStorageWithPeers: true to accept this'

/**
 * Detects several instances on one PostgreSQL database when any of them has no Redis. Each instance holds a
 * session-level advisory lock on a connection of its own for as long as it runs: exclusive with memory storage,
 * shared with Redis. Two Redis instances share it; any other mix cannot both hold it, so the later one refuses to
 * start (a BootError), unless the override is set, which warns at every start. A dropped connection loses the lock;
 * it is taken again, and a peer found meanwhile is logged as an error.
 */
export async function holdPeerLock(options: PeerLockOptions): Promise<PeerLock> {
  const take = options.sharedStorage ? 'pg_try_advisory_lock_shared' : 'pg_try_advisory_lock'
  let client: pg.Client | undefined
  let retry: NodeJS.Timeout | undefined
  let closed = false

  const acquire = async (): Promise<boolean> => {
    const next = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: options.connectTimeoutMs, keepAlive: true, query_timeout: options.queryTimeoutMs })
    next.on('error', () => {}) // an 'end' follows, which is what is acted on
    await next.connect()
    try {
      const { rows } = await next.query<{ held: boolean }>(`select ${take}($1) as held`, [PEER_LOCK])
      client = next
      next.once('end', () => void (closed || lost()))
      return rows[0]?.held === true
    }
    catch (error) {
      await next.end().catch(() => {})
      throw error
    }
  }

  const lost = () => {
    client = undefined
    retry = setTimeout(() => {
      acquire().then(
        (held) => {
          if (!held) options.logger.error(`Another dcgate instance now runs on this database (${redact(options.url)}) and one of you has no Redis: ${WHY}. ${FIX}.`)
        },
        () => lost(),
      )
    }, RETRY_MS).unref()
  }

  let held: boolean
  try {
    held = await acquire()
  }
  catch (error) {
    throw new BootError(`Could not take the instance lock on the database at ${redact(options.url)}`, [error instanceof Error ? error.message : String(error)], { cause: error })
  }
  const lock: PeerLock = {
    async close() {
      closed = true
      clearTimeout(retry)
      // Ending the session releases the lock; a database that does not answer cannot keep the process open.
      const ending = client?.end().catch(() => {})
      await Promise.race([ending, new Promise((resolve) => setTimeout(resolve, options.connectTimeoutMs).unref())])
    },
  }
  if (!held && !options.allowPeers) {
    await lock.close()
    throw new BootError(
      options.sharedStorage
        ? 'Another dcgate instance without Redis runs on this database'
        : 'Another dcgate instance runs on this database, and this one has no Redis (storage.url)',
      [WHY, FIX],
    )
  }
  if (options.allowPeers && (!held || !options.sharedStorage)) {
    options.logger.warn(`server.allowMemoryStorageWithPeers is set${held ? '' : ' and another instance runs on this database'}: ${WHY}.`)
  }
  return lock
}
