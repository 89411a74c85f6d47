import type { H3Event } from 'h3'
import type { MikroORM } from '@mikro-orm/postgresql'
import { createAdminTokenCheck, isLocal } from '../auth/guards.ts'
import type { RunPrepared } from '../db/prepared.ts'
import { apiError, jsonResponse } from '../http/errors.ts'
import type { RouteTable } from '../http/routes.ts'
import { READY_QUERY_TIMEOUT_MS, type Readiness } from './readiness.ts'
import { metrics, metricsRegistry } from './registry.ts'
import { sampleOutbox, samplePool } from './sample.ts'

export interface MetricsRouteDeps {
  routes: RouteTable
  prepared: RunPrepared
  orm: MikroORM
  readiness: Readiness
  adminToken: string
  /** admin.trustedProxies: a request from one of these is relayed, never local. */
  proxies: readonly string[]
  version: string
  /** Calls `metrics:collect`, where plugins set the gauges they read at scrape (capture's queue and journal). */
  collect: () => Promise<unknown>
}

const NO_STORE = { 'cache-control': 'no-store' }

const NOT_READY = {
  booted: 'Not ready: still booting, or shutting down',
  database: `Not ready: the database did not answer within ${READY_QUERY_TIMEOUT_MS} ms`,
} as const

/** GET /metrics (Prometheus text), GET /livez and GET /readyz. */
export function installMetricsRoutes(deps: MetricsRouteDeps): void {
  const hasToken = createAdminTokenCheck(deps.adminToken)
  metrics.buildInfo.set({ version: deps.version }, 1)

  deps.routes.add({
    method: 'GET',
    path: '/metrics',
    // Not the admin guard: a Prometheus on this host scrapes without a token; from anywhere else the token is needed.
    auth: 'none',
    summary: 'This instance\'s metrics, in Prometheus text format',
    description: 'Open from loopback on a direct connection (not from an `admin.trustedProxies` address, no forwarding header); from any '
      + 'other address, or through a proxy, the admin token is required as a bearer token. Each instance serves its own numbers; see docs/metrics.md.',
    tags: ['Operations'],
    responses: { 200: { description: 'Prometheus text exposition format 0.0.4' }, 401: { description: 'Not from loopback, and no admin token' } },
    precheck: (event: H3Event) => {
      if (!isLocal(event, deps.proxies) && !hasToken(event)) throw apiError(401, { message: 'Metrics answer on loopback, or with the admin token' })
    },
    handler: async () => {
      samplePool(deps.orm)
      await Promise.all([sampleOutbox(deps.prepared), deps.collect()])
      return new Response(await metricsRegistry.metrics(), { headers: { 'content-type': metricsRegistry.contentType, ...NO_STORE } })
    },
  })

  deps.routes.add({
    method: 'GET',
    path: '/livez',
    auth: 'none',
    summary: 'Liveness: the process answers',
    description: 'Always 200 while the process serves requests; checks no dependency (a restart would not fix a database outage).',
    tags: ['Operations'],
    responses: { 200: { description: 'The process is up' } },
    handler: () => jsonResponse(200, { status: 'ok' }, new Headers(NO_STORE)),
  })

  deps.routes.add({
    method: 'GET',
    path: '/readyz',
    auth: 'none',
    summary: 'Readiness: boot finished and the database answers',
    description: 'Boot finished (migrations applied, the capture journal replayed) and the database answered `select 1` within 2 s. '
      + '503 with the failed check otherwise; it turns 200 again by itself once the database answers. '
      + '`warnings` lists vendor API versions a site uses that retire within 60 days (or already have); they never make it 503.',
    tags: ['Operations'],
    responses: { 200: { description: 'Ready for traffic' }, 503: { description: 'Not ready; `failed` names the check' } },
    handler: async () => {
      const { ready, checks, failed, warnings } = await deps.readiness.check()
      const details = warnings ? { warnings } : {}
      if (ready) return jsonResponse(200, { status: 'ready', checks, ...details }, new Headers(NO_STORE))
      return jsonResponse(503, { status: 'not_ready', message: NOT_READY[failed!], failed, checks, ...details }, new Headers(NO_STORE))
    },
  })
}
