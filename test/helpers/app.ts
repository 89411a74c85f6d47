import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createConsola } from 'consola'
import { inject } from 'vitest'
import { createApp, type CreateAppOptions, type DcgateApp } from '../../core/app.ts'
import { resolveConfig } from '../../core/config/load.ts'
import type { ConfigInput } from '../../core/config/schema.ts'
import { freshDatabase, type TestDatabase } from './database.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { adapters } from '../../adapters/index.ts'

export const DEMO_SITE = { id: 'demo', name: 'Demo shop' } as const

export interface TestApp {
  dcgate: DcgateApp
  /** In-process request, as a client would send it. */
  request: (path: string, init?: RequestInit) => Promise<Response>
  /** Calls the admin API with the app's admin token. */
  admin: (method: string, path: string, body?: unknown) => Promise<Response>
  /** Creates a private key through the admin API and returns it in full. */
  createKey: (siteId?: string, name?: string) => Promise<string>
  dataDir: string
  close: () => Promise<void>
}

export interface TestAppOptions extends Partial<CreateAppOptions> {
  /** Use this database URL instead of a fresh one (several instances on one database). */
  databaseUrl?: string
  /** Use this data dir (to restart on the same embedded database); default a new temp dir. */
  dataDir?: string
  /** Persist the embedded database under dataDir instead of memory. */
  persistent?: boolean
  /** Use Redis (REDIS_URL) for storage; default: when REDIS_URL is set, as on CI's second pass. */
  redis?: boolean
}

/** Boots a dcgate app the way `dcgate start` does, minus the socket, on a database of its own. */
export async function bootTestApp(input: Partial<ConfigInput> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'dcgate-test-'))
  const database: TestDatabase = options.databaseUrl ? { url: options.databaseUrl, drop: async () => {} } : await freshDatabase()
  const config = resolveConfig({
    sites: [DEMO_SITE],
    ...input,
    dataDir,
    database: { ...input.database, url: database.url },
    storage: input.storage ?? { url: (options.redis ?? true) ? process.env.REDIS_URL : undefined },
  }, {}, options.builtInPlugins ?? builtInPlugins)
  const logger = options.logger ?? createConsola({ level: process.env.DCGATE_TEST_LOG ? 4 : -999 })
  const dcgate = await createApp(config, { inMemoryDatabase: !options.persistent, embeddedTemplate: options.persistent ? undefined : pgliteTemplate(), logger, ...options, builtInPlugins: options.builtInPlugins ?? builtInPlugins, adapters: options.adapters ?? adapters }).catch(async (error: unknown) => {
    await database.drop()
    throw error
  })
  const request = (path: string, init?: RequestInit) => Promise.resolve(dcgate.app.request(path, init))
  const admin = (method: string, path: string, body?: unknown) => request(`/admin/api${path}`, {
    method,
    headers: { 'authorization': `Bearer ${dcgate.adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return {
    dcgate,
    request,
    admin,
    dataDir,
    async createKey(siteId = DEMO_SITE.id, name = 'test') {
      const response = await admin('POST', `/sites/${siteId}/keys`, { name })
      if (response.status !== 201) throw new Error(`creating a key failed: ${response.status} ${await response.text()}`)
      return ((await response.json()) as { key: string }).key
    },
    async close() {
      await dcgate.close()
      await database.drop()
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

export function health(app: TestApp, key?: string): Promise<Response> {
  return app.request('/api/v1/export/health', { headers: key === undefined ? {} : { 'x-dc-key': key } })
}

/** A Purchase of 10 EUR by ann@example.com, posted to the automation route as `messageId` with the private `key`. */
export function postPurchase(app: TestApp, key: string, messageId: string): Promise<Response> {
  return app.request('/api/v1/conversions/automation', {
    method: 'POST',
    headers: { 'x-dc-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ event: 'Purchase', messageId, properties: { value: 10, currency: 'EUR' }, context: { traits: { email: 'ann@example.com' } } }),
  })
}

let template: Blob | undefined
/** The initialised PGlite data dir from test/global-setup.ts, loaded once per test file. */
function pgliteTemplate(): Blob {
  template ??= new Blob([readFileSync(inject('pgliteTemplate'))])
  return template
}
