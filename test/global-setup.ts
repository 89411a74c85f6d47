import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A dumped, freshly initialised (not migrated) PGlite data dir, so each test database skips initdb. */
    pgliteTemplate: string
  }
}

export async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'dcgate-pglite-template-'))
  const db = await PGlite.create()
  const file = join(dir, 'template.tar')
  writeFileSync(file, new Uint8Array(await (await db.dumpDataDir('none')).arrayBuffer()))
  await db.close()
  project.provide('pgliteTemplate', file)
  return () => rmSync(dir, { recursive: true, force: true })
}
