import { MikroORM, defineConfig, type Options } from '@mikro-orm/postgresql'
import type { EntitySchema } from '@mikro-orm/core'
import { Migrator } from '@mikro-orm/migrations'
import { BootError } from '../errors.ts'
import { migrations } from './migrations/index.ts'
import { withoutStatement } from './loggable-error.ts'
import { connectionSettings, createQueryGuard, registerQueryGuard, withoutStatementTimeout, type DatabaseTimeouts } from './timeouts.ts'
import { Site } from './entities/site.ts'
import { ApiKey } from './entities/api-key.ts'
import { Conversion } from '../delivery/entities/conversion.ts'
import { Delivery } from '../delivery/entities/delivery.ts'
import { PendingRefund } from '../delivery/entities/pending-refund.ts'
import { DeliveryDiagnosis } from '../delivery/entities/delivery-diagnosis.ts'
import { ConversionWait } from '../delivery/entities/conversion-wait.ts'
import { PlatformCredential } from '../delivery/entities/platform-credential.ts'
import { JobLease } from './entities/job-lease.ts'
import { DeliveryAlert } from '../health/entity.ts'
import { ManagedSite } from './entities/managed-site.ts'

/** Entities the kernel owns (the delivery pipeline is core: intake, release and capture share it). */
export const coreEntities: readonly EntitySchema[] = [Site, ApiKey, Conversion, Delivery, PendingRefund, ConversionWait, PlatformCredential, DeliveryDiagnosis, JobLease, DeliveryAlert, ManagedSite]

export interface Database {
  orm: MikroORM
  /** `embedded (PGlite at …)` or `postgresql://host/db`, for the banner; never includes a password. */
  description: string
  embedded: boolean
  close: () => Promise<void>
}

export interface DatabaseOptions {
  /** PostgreSQL URL; absent means the embedded PGlite. */
  url?: string
  /** Where the embedded database lives; null keeps it in memory (tests). */
  dataDir: string | null
  entities: readonly EntitySchema[]
  /** Start the embedded database from this dumped data dir (tests), instead of running initdb. */
  embeddedTemplate?: Blob
  /** Where MikroORM's own messages (migrator progress, warnings) go. */
  log?: (message: string) => void
  /** Connect, acquire and statement limits on PostgreSQL; absent (`dcgate migrate`) or embedded waits as long as it takes. */
  timeouts?: DatabaseTimeouts
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  // PGlite (its module and WASM) is loaded only for the embedded database: a server on PostgreSQL never needs it.
  const embedded = options.url ? undefined : await (await import('./embedded.ts')).startEmbeddedDatabase(options.dataDir, options.embeddedTemplate)
  const url = options.url ?? embedded!.url
  try {
    // The embedded database runs in this process: it cannot go silent on a network, and its one connection is
    // shared by everything, so a long batch must make others wait rather than fail.
    const timeouts = embedded ? undefined : options.timeouts
    const guard = createQueryGuard(timeouts)
    const base = ormOptions(url, options.entities, Boolean(embedded), timeouts)
    const log = options.log ?? (() => {})
    const orm = await MikroORM.init({
      ...base,
      pool: { ...base.pool, afterCreate: guard.afterCreate },
      // knex's own warnings (a pooled connection dropped) go to the same place, never to stdout, without a statement.
      driverOptions: { ...base.driverOptions, log: knexLog(log) },
      logger: log,
    })
    registerQueryGuard(orm, guard)
    return {
      orm,
      embedded: Boolean(embedded),
      description: embedded ? `embedded PGlite (${options.dataDir ? `${options.dataDir}/db` : 'in memory'})` : redact(url),
      async close() {
        await orm.close(true)
        await embedded?.close()
      },
    }
  }
  catch (error) {
    await embedded?.close()
    throw new BootError(`Could not connect to the database at ${redact(url)}`, [error instanceof Error ? error.message : String(error)], { cause: error })
  }
}

export function ormOptions(url: string, entities: readonly EntitySchema[], embedded: boolean, timeouts?: DatabaseTimeouts): Options {
  return defineConfig({
    clientUrl: url,
    entities: [...entities],
    // PGlite serves a single session; PostgreSQL gets a normal pool.
    pool: {
      ...(embedded ? { min: 0, max: 1 } : { min: 0, max: 10 }),
      // A stalled database fails the request instead of queueing it behind stuck connections.
      ...(timeouts ? { acquireTimeoutMillis: timeouts.acquireTimeoutMs, createTimeoutMillis: timeouts.connectTimeoutMs } : {}),
    },
    // No JIT compiling on PostgreSQL: dcgate's statements run in well under a millisecond, and a plan whose estimated
    // cost passed jit_above_cost (the intake's lookup on a site with many visits) spent 50 ms compiling on every call.
    driverOptions: { connection: { ...connectionSettings(timeouts), ...(embedded ? {} : { options: '-c jit=off' }) } },
    extensions: [Migrator],
    migrations: { migrationsList: withoutStatementTimeout(migrations), transactional: true, allOrNothing: true, snapshot: false },
    discovery: { warnWhenNoEntities: false },
    forceUtcTimezone: true,
    allowGlobalContext: false,
    debug: false,
  })
}

function knexLog(log: (message: string) => void) {
  const write = (message: unknown) => log(`knex: ${withoutStatement(message instanceof Error ? message.message : String(message))}`)
  return { warn: write, error: write, deprecate: write, debug: () => {} }
}

/** postgresql://user:secret@host/db → postgresql://user:***@host/db */
export function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@')
}
