import { readFileSync } from 'node:fs'
import { H3, type H3Event, HTTPError } from 'h3'
import type { ConsolaInstance } from 'consola'
import type { Storage } from 'unstorage'
import type { ResolvedConfig } from './config/schema.ts'
import { createLogger, withoutPersonalData } from './logger.ts'
import { callHookSafe, createDcgateHooks, reportError, type DcgateHookable, type DcgateHooks, type ErrorContext } from './hooks.ts'
import { resolvePlugins, runPlugins, type PluginCatalog, type PluginContext, type PluginDefinition } from './plugin.ts'
import { createRegistry, type AnyDefinition } from './registry.ts'
import { coreEntities, openDatabase, type Database } from './db/orm.ts'
import { declaredBodyLimit } from './http/body.ts'
import { createPreparedRunner } from './db/prepared.ts'
import { migrate } from './db/migrate.ts'
import { holdPeerLock, type PeerLock } from './db/peer-lock.ts'
import { createDcgateStorage } from './storage.ts'
import { openSites, POLL_MS } from './sites/managed.ts'
import { createKeyVerifier } from './auth/verifier.ts'
import { adminProxies, createAdminGuard, createKeyGuard } from './auth/guards.ts'
import { resolveAdminToken } from './admin/token.ts'
import { resolveServerSecrets } from './secrets/server-secret.ts'
import { createKeyring } from './secrets/keyring.ts'
import { tidyPlatformCredentials } from './delivery/queries/credentials.ts'
import { installAdminRoutes } from './admin/routes.ts'
import { installDeliveryRoutes } from './admin/deliveries.ts'
import { createRouteTable } from './http/routes.ts'
import { routePattern } from './http/route-pattern.ts'
import { errorBody, jsonResponse } from './http/errors.ts'
import { createAnsweredReporter, noteRefusal } from './http/answered.ts'
import { installApiReference } from './http/docs-page.ts'
import { createOutbox } from './delivery/outbox.ts'
import { createConversionPipeline } from './delivery/pipeline.ts'
import { scheduleDeliveryWorker } from './delivery/worker.ts'
import { scheduleDiagnostics } from './delivery/diagnostics.ts'
import { runStartupChecks } from './delivery/startup-checks.ts'
import { scheduleClearFieldErasure } from './delivery/clear-fields.ts'
import { scheduleDeliveryAlerts } from './health/alerts.ts'
import { createMailer, type Mailer } from './mail/mailer.ts'
import { createScheduler } from './jobs/scheduler.ts'
import { createRequestObserver } from './metrics/http.ts'
import { countingConversions } from './metrics/observe.ts'
import { createReadiness, type Readiness } from './metrics/readiness.ts'
import { installMetricsRoutes } from './metrics/routes.ts'
import { REQUEST_ID_HEADER } from './http/request-id.ts'
import { describeSunset, findSunsetWarnings, toPublicSunset } from './api-sunsets.ts'

export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version

export interface CreateAppOptions {
  logger?: ConsolaInstance
  /** Keep the embedded database in memory (tests); the default persists it under dataDir. */
  inMemoryDatabase?: boolean
  /** Start the embedded database from a dumped, freshly initialised data dir (tests: skips initdb). */
  embeddedTemplate?: Blob
  /**
   * The plugins the config's `plugins` list may name, and every adapter: the composition root (dcgate.ts, the entry
   * point) passes the built-in lists; tests pass their own. The kernel knows no plugin or adapter by itself.
   */
  builtInPlugins: PluginCatalog
  adapters: readonly AnyDefinition[]
}

export interface DcgateApp {
  app: H3
  config: ResolvedConfig
  hooks: DcgateHookable
  storage: Storage
  database: Database
  plugins: readonly PluginDefinition[]
  context: PluginContext
  adminToken: string
  /** Turns /readyz to 503 (shutting down), so a load balancer sends nothing new; close() does it too. */
  drain: () => void
  /** Runs `app:close`, then closes storage and the database. Idempotent. */
  close: () => Promise<void>
}

/**
 * Builds everything a dcgate server is: checks plugins and adapter options first (no I/O), then
 * opens the database, migrates, syncs sites, installs the kernel routes and runs each plugin's setup.
 */
export async function createApp(config: ResolvedConfig, options: CreateAppOptions): Promise<DcgateApp> {
  // Every plugin logs through this one; database errors lose their statement, parameters and detail on the way out.
  const logger = withoutPersonalData(options.logger ?? createLogger())
  const hooks = createDcgateHooks()
  const plugins = resolvePlugins(config.plugins, options.builtInPlugins)
  const registry = createRegistry(options.adapters, config.sites)
  const adminToken = resolveAdminToken(config.admin.token, config.dataDir)
  const keyring = createKeyring(resolveServerSecrets(config.server, config.dataDir))
  const storage = createDcgateStorage(config.storage, (error) => logger.warn(`Redis is unreachable (${error.message}); requests that need it answer 500 until it is back`))
  let database: Database | undefined
  let peerLock: PeerLock | undefined
  let readiness: Readiness | undefined
  const close = once(async () => {
    readiness?.markStopping() // first: /readyz answers 503 while the rest closes
    await callHookSafe(hooks, logger, 'app:close')
    await storage.dispose().catch((error: unknown) => logger.warn('closing storage failed', error))
    await peerLock?.close()
    await database?.close()
  })
  try {
    database = await openDatabase({
      url: config.database.url,
      dataDir: options.inMemoryDatabase ? null : config.dataDir,
      embeddedTemplate: options.embeddedTemplate,
      entities: [...coreEntities, ...plugins.flatMap((p) => p.entities ?? [])],
      log: (message) => logger.debug(message),
      timeouts: config.database,
    })
    const { orm } = database
    // Several instances on one PostgreSQL need Redis; the embedded database belongs to this process alone.
    if (config.database.url) {
      peerLock = await holdPeerLock({
        url: config.database.url,
        sharedStorage: Boolean(config.storage.url),
        allowPeers: config.server.allowMemoryStorageWithPeers,
        connectTimeoutMs: config.database.connectTimeoutMs,
        queryTimeoutMs: config.database.statementTimeoutMs,
        logger,
      })
    }
    const runMigrations = () => migrate(orm, config.database.url, config.database.connectTimeoutMs)
    const applied = await runMigrations()
    if (applied.length) logger.info(`Applied migrations: ${applied.join(', ')}`)
    const prepared = await createPreparedRunner(orm)
    const { sites, managed: managedSites } = await openSites({ orm, prepared, keyring, registry, configSites: config.sites, logger })
    const connections = sites.list().flatMap((site) => registry.forSite(site.id, 'ad-platform').map((c) => ({ siteId: site.id, platform: c.definition.name })))
    await tidyPlatformCredentials(prepared, keyring, connections, logger)

    const report = (error: unknown, event?: H3Event) => reportError(hooks, logger, error, { source: 'request', path: event && routePattern(event), requestId: event?.context.requestId })
    const observer = createRequestObserver(logger)
    const answered = createAnsweredReporter(hooks, (error) => void report(error))
    const app = new H3({
      silent: true,
      onError: async (error, event) => {
        if (error.unhandled || !HTTPError.isError(error)) await report(error.cause ?? error, event)
        const body = errorBody(error)
        noteRefusal(event, body)
        return jsonResponse(error.status, body, withAnswerHeaders(error.headers, event))
      },
      // Metrics by route and status for every answer, errors included; a request id with LOG_FORMAT=json; a debug line;
      // the `requests:answered` hook for a site's requests (the dashboard's live events).
      onRequest: observer.onRequest,
      onResponse: (response, event) => {
        observer.onResponse(response, event)
        answered(response, event)
      },
    })
    app.use(declaredBodyLimit(config.server.bodyLimit))

    const verifier = createKeyVerifier({ prepared, sites, shared: config.storage.url ? storage : undefined, onBackgroundError: (error) => void report(error) })
    const routes = createRouteTable(app, {
      key: createKeyGuard(verifier, report),
      admin: createAdminGuard(adminToken, { allowRemote: config.admin.allowRemote, proxies: adminProxies(config) }),
    }, { bodyLimit: config.server.bodyLimit })
    const baseUrl = config.server.baseUrl ?? `http://localhost:${config.server.port}`
    const callHook = <K extends keyof DcgateHooks>(name: K, ...args: Parameters<DcgateHooks[K]>) => callHookSafe(hooks, logger, name, ...args)
    installAdminRoutes({
      routes, prepared, sites, managedSites, verifier, callHook,
      scriptHost: config.server.cdnUrl ?? baseUrl,
      apiBase: baseUrl,
      migrate: runMigrations,
      status: () => ({ version: VERSION, base_url: baseUrl, database: database!.description, plugins: plugins.map((p) => p.name), sites: sites.list().map((s) => s.id) }),
    })
    installDeliveryRoutes(routes, prepared, sites, config.delivery.retryWindowDays)
    const siteIds = config.sites.map((site) => site.id)
    const sunsets = (now = new Date()) => findSunsetWarnings(registry, siteIds, now)
    for (const warning of sunsets()) logger.warn(describeSunset(warning))
    readiness = createReadiness(prepared, () => sunsets().map(toPublicSunset))
    installMetricsRoutes({ routes, prepared, orm, readiness, adminToken, proxies: adminProxies(config), version: VERSION, collect: () => callHookSafe(hooks, logger, 'metrics:collect') })
    installApiReference(app, routes, { version: VERSION, serverUrl: baseUrl })

    const reportDelivery = (error: unknown) => void reportError(hooks, logger, error, { source: 'delivery' })
    const outbox = createOutbox({ siteIds: () => sites.list().map((site) => site.id), prepared, registry, storage, keyring, policy: config.delivery, onError: reportDelivery })
    const conversions = countingConversions(createConversionPipeline({ prepared, registry, outbox, hooks, logger }))
    const reportSafe = (error: unknown, context: ErrorContext) => void reportError(hooks, logger, error, context).catch(() => {})
    const scheduler = createScheduler({ prepared, report: reportSafe })
    // Registered before any plugin's: jobs start once every setup has run, and stop before plugins close.
    hooks.hook('app:ready', () => scheduler.start())
    hooks.hook('app:close', () => scheduler.stop())
    scheduleDeliveryWorker(scheduler.schedule, outbox, config.delivery.workerIntervalMs, reportDelivery)
    // Not awaited: the checks only warn, and a slow vendor must not hold the start.
    hooks.hook('app:ready', () => void runStartupChecks(registry, config.sites.map((site) => site.id), logger))
    scheduleDiagnostics(scheduler.schedule, { prepared, registry, storage, timeoutMs: config.delivery.requestTimeoutMs, onError: reportDelivery }, config.delivery.workerIntervalMs)
    scheduleClearFieldErasure(scheduler.schedule, prepared, config.delivery.retryWindowDays)
    // Delivery health alerts (core/health): the mailer is made on the first alert, and closed with the app.
    let alertMailer: Mailer | undefined
    hooks.hook('app:close', () => alertMailer?.close())
    scheduleDeliveryAlerts(scheduler.schedule, {
      prepared, registry, sites, baseUrl, mailer: () => (alertMailer ??= createMailer(config, logger)), report: (error) => reportSafe(error, { source: 'job:health:alerts' }),
    }, config.delivery.workerIntervalMs)
    // Sites made or changed in the dashboard on another instance: applied here within POLL_MS.
    scheduler.schedule({ name: 'sites:dashboard-changes', everyMs: POLL_MS, scope: 'instance', atStart: false, run: () => managedSites.refresh() })

    const context: PluginContext = {
      app, hooks, config, orm, prepared, storage, keyring, registry, routes, keys: verifier, sites, managedSites, conversions, logger, schedule: scheduler.schedule, report: reportSafe,
    }
    await runPlugins(plugins, context)
    await callHookSafe(hooks, logger, 'sites:synced', sites.list().map((s) => ({ id: s.id, copKey: s.copKey })))
    await hooks.callHook('app:ready')
    // Ready once every plugin's setup ran (capture replayed its journal there).
    readiness.markBooted()
    return { app, config, hooks, storage, database, plugins, context, adminToken, drain: readiness.markStopping, close }
  }
  catch (error) {
    await close().catch(() => {})
    throw error
  }
}

/**
 * Headers a route marked for every answer (the capture routes' CORS headers, for the site's origins) stay on the
 * error answer too, so the browser lets the script read why.
 */
function withAnswerHeaders(headers: Headers | undefined, event: H3Event | undefined): Headers | undefined {
  const kept = event?.context.answerHeaders
  const requestId = event?.context.requestId
  if (!kept?.length && !requestId) return headers
  const merged = new Headers(headers)
  for (const [name, value] of kept ?? []) merged.set(name, value)
  if (requestId) merged.set(REQUEST_ID_HEADER, requestId)
  return merged
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined
  return () => (running ??= fn())
}
