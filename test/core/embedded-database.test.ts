import { readFileSync } from 'node:fs'
import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { startEmbeddedDatabase } from '../../core/db/embedded.ts'

// Issue 26: PGlite's default 128 MB of shared buffers live in dcgate's own memory; the embedded database keeps 16 MB.
describe('the embedded database', () => {
  it('runs PostgreSQL with 16 MB of shared buffers and PGlite\'s own single-process settings', async () => {
    const db = await startEmbeddedDatabase(null, new Blob([readFileSync(inject('pgliteTemplate'))]))
    const client = new pg.Client({ connectionString: db.url })
    try {
      await client.connect()
      const settings = await client.query<{ name: string, value: string }>(`select name, current_setting(name) as value from pg_settings where name in ('shared_buffers', 'max_worker_processes', 'search_path') order by name`)
      expect(Object.fromEntries(settings.rows.map((row) => [row.name, row.value]))).toEqual({ max_worker_processes: '0', search_path: 'public', shared_buffers: '16MB' })
    }
    finally {
      await client.end()
      await db.close()
    }
  })
})
