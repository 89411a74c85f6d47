import type { ResolvedConfig } from '../../config/schema.ts'
import { coreEntities, openDatabase } from '../../db/orm.ts'
import { migrate } from '../../db/migrate.ts'
import type { AdminClient } from '../admin-client.ts'
import { CliError, type Output } from '../output.ts'

/**
 * PostgreSQL: migrates directly (safe beside running instances: they share the advisory lock).
 * Embedded: a running server owns the database, so it is asked to migrate; when none runs on this
 * data dir, the data dir is opened directly.
 */
export async function migrateCommand(config: ResolvedConfig, client: AdminClient, out: Output): Promise<void> {
  let applied: string[]
  let where: string
  if (!config.database.url && await serverOwnsDataDir(client, config)) {
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

/** True when a dcgate server answers at the admin URL and runs on this config's embedded data dir. */
async function serverOwnsDataDir(client: AdminClient, config: ResolvedConfig): Promise<boolean> {
  try {
    const status = await client.request<{ database?: string }>('GET', '/status')
    return status.database?.includes(config.dataDir) === true
  }
  catch {
    // No server, another service, or no token: open the data dir directly (its lock refuses a live owner).
    return false
  }
}
