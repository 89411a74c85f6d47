import { chmodSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { lockDataDir } from './data-dir-lock.ts'

/**
 * PostgreSQL's settings for the embedded database, on top of PGlite's own start parameters. PGlite keeps
 * PostgreSQL's default shared_buffers of 128 MB, all of it in this process's WASM memory and touched as pages are
 * read: 16 MB saves about 150 MB of RSS (docs/architecture.md, "Memory"). The files stay in the OS page cache, so a
 * page missed in the buffers is a read from memory, not from disk.
 */
const EMBEDDED_SETTINGS = ['-c', 'shared_buffers=16MB']

export interface EmbeddedDatabase {
  /** A postgres:// URL on loopback that MikroORM connects to. */
  url: string
  close: () => Promise<void>
}

/**
 * Starts PGlite (real PostgreSQL in WASM) persisted under `<dataDir>/db`, or in memory when dataDir
 * is null, and serves it on a random loopback port so MikroORM talks to it like any PostgreSQL.
 * PGlite has one session, so the socket takes one connection and the ORM pool must be 1.
 */
export async function startEmbeddedDatabase(dataDir: string | null, template?: Blob): Promise<EmbeddedDatabase> {
  let dir: string | undefined
  let unlock = () => {}
  if (dataDir !== null) {
    dir = join(dataDir, 'db')
    // PGlite writes its files world-readable; a private directory keeps other local users out of them.
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    chmodSync(dir, 0o700)
    unlock = lockDataDir(join(dataDir, 'db.lock'))
  }
  try {
    // A template (a dumped, freshly initialised data dir) skips initdb, which is most of PGlite's start-up.
    const startParams = [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS]
    const db = await PGlite.create(dir, template ? { loadDataDir: template, startParams } : { startParams })
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 })
    await server.start()
    const port = Number(server.getServerConn().split(':').pop())
    return {
      url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`,
      async close() {
        await server.stop()
        await db.close()
        unlock()
      },
    }
  }
  catch (error) {
    unlock()
    throw error
  }
}
