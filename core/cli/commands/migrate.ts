import type { ResolvedConfig } from '../../config/schema.ts'
import { coreEntities, openDatabase } from '../../db/orm.ts'
import { migrate } from '../../db/migrate.ts'
import type { AdminClient } from '../admin-client.ts'
import { CliError, type Output } from '../output.ts'

/**
 * PostgreSQL: migrates directly (safe beside running instances: they share the advisory lock).
 * Embedded: the running server owns the database, so it is asked to migrate; when none runs,
 * the data dir is opened directly.
 */
export async function migrateCommand(config: ResolvedConfig, client: AdminClient, out: Output): Promise<void> {
  let applied: string[]
  let where: string
  if (!config.database.url && await serverIsUp(client)) {
    applied = (await client.request<{ applied: string[] }>('POST', '/migrate')).applied
    where = `the running server at ${client.url}`
  }
  else {
    const database = await openDatabase({ url: config.database.url, dataDir: config.dataDir, entities: coreEntities })
    try {
      applied = await migrate(database.orm, config.database.url)
      where = database.description
    }
    catch (error) {
      throw new CliError(`Migration failed: ${error instanceof Error ? error.message : String(error)}`)
    }
    finally {
      await database.close()
    }
  }
  out.result({ applied, database: where }, () => applied.length
    ? `Applied ${applied.length} migration(s) on ${where}:\n${applied.map((m) => `  ${m}`).join('\n')}`
    : `Database is up to date (${where}).`)
}

async function serverIsUp(client: AdminClient): Promise<boolean> {
  try {
    await fetch(`${client.url}/openapi.json`, { method: 'HEAD', signal: AbortSignal.timeout(2000) })
    return true
  }
  catch {
    return false
  }
}
