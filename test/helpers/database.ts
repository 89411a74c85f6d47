import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'

export interface TestDatabase {
  /** A URL to hand to dcgate as database.url, or undefined for the embedded default. */
  url: string | undefined
  drop: () => Promise<void>
}

/** True when the suite runs against a real PostgreSQL (DATABASE_URL set), as CI's second pass does. */
export const onPostgres = Boolean(process.env.DATABASE_URL)
export const onRedis = Boolean(process.env.REDIS_URL)

/**
 * A database no other test touches: a new `dcgate_test_<random>` on the PostgreSQL of DATABASE_URL
 * (dropped afterwards), or, on the default run, the embedded PGlite that createApp starts itself.
 */
export async function freshDatabase(): Promise<TestDatabase> {
  if (!process.env.DATABASE_URL) return { url: undefined, drop: async () => {} }
  return createPostgresDatabase(process.env.DATABASE_URL)
}

/**
 * A database several app instances can share: a fresh PostgreSQL database, or, on the default run,
 * an in-memory PGlite served on loopback with room for several connections.
 */
export async function sharedDatabase(): Promise<TestDatabase & { url: string }> {
  if (process.env.DATABASE_URL) return createPostgresDatabase(process.env.DATABASE_URL)
  const db = await PGlite.create()
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 32 })
  await server.start()
  const port = server.getServerConn().split(':').pop()
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`,
    drop: async () => {
      await server.stop()
      await db.close()
    },
  }
}

/** A new database of its own on the PostgreSQL server of adminUrl, dropped by drop(). */
export async function createPostgresDatabase(adminUrl: string): Promise<TestDatabase & { url: string }> {
  const name = `dcgate_test_${randomBytes(6).toString('hex')}`
  await withClient(adminUrl, (c) => c.query(`create database ${name}`))
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: () => withClient(adminUrl, (c) => c.query(`drop database if exists ${name} with (force)`)).then(() => {}),
  }
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await fn(client)
  }
  finally {
    await client.end()
  }
}
