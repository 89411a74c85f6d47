/**
 * What the hostile-input tests share: dcgate with every built-in plugin and every webhook source, served over real
 * HTTP on loopback (the route table reads Node's request stream there, as in production); a sample input for each
 * route; and the hostile variants of an input.
 */
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { serve } from 'h3'
import type { RouteDefinition } from '../../core/http/routes.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { bootTestApp, DEMO_SITE, type TestApp } from '../helpers/app.ts'

export const SECRET = 'hostile-suite-signing-secret-0123456789'
const HELD_EVENT = { key: 'qualified_lead', name: 'Qualified lead', sendsAs: 'Lead', release: 'when_qualified' } as const

export interface HostileServer {
  app: TestApp
  /** http://127.0.0.1:<port> */
  url: string
  key: string
  copKey: string
  releaseSecret: string
  close: () => Promise<void>
}

/** Every plugin, every source on the demo site, no network lookups; listening on a loopback port of its own. */
export async function startHostileServer(): Promise<HostileServer> {
  const app = await bootTestApp({
    plugins: Object.keys(builtInPlugins),
    capture: { flushIntervalMs: 20 },
    emailRisk: { lookupsPerMinute: 0, timeoutMs: 50 },
    sites: [{
      ...DEMO_SITE,
      domains: ['shop.example'],
      events: [HELD_EVENT],
      sources: {
        shopify: { secret: SECRET },
        woocommerce: { secret: SECRET },
        stripe: { signingSecret: `whsec_${SECRET}` },
        zapier: {},
        make: { secret: SECRET },
        n8n: {},
      },
    }],
  })
  const server = serve(app.dcgate.app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
  await server.ready()
  const url = server.url!.replace(/\/$/, '')
  const site = app.dcgate.context.sites.byId(DEMO_SITE.id)!
  return {
    app,
    url,
    key: await app.createKey(),
    copKey: site.copKey,
    releaseSecret: site.releaseSecret,
    async close() {
      await server.close(true)
      await app.close()
    },
  }
}

type AnyRoute = RouteDefinition<unknown, unknown, unknown>

/** Valid-looking path parameters by name; a new parameter gets a plain word. */
export function paramValue(server: HostileServer, name: string): string {
  const values: Record<string, string> = {
    id: DEMO_SITE.id,
    prefix: 'dcp_abcd1234',
    conversion: '018f2b9c-0000-7000-8000-000000000000',
    api_key: server.copKey,
    secret: server.releaseSecret,
    source: 'zapier',
    code: 'DEL-0000-0000',
  }
  return values[name] ?? 'value'
}

/** The route's path with `params` (raw, already encoded) in place of its `:name` parts. */
export function pathWith(route: AnyRoute, params: (name: string) => string): string {
  return route.path.replace(/:(\w+)/g, (_, name: string) => params(name))
}

/** Headers that get a request past the route's guard. */
export function authHeaders(server: HostileServer, route: AnyRoute): Record<string, string> {
  if (route.auth === 'key') return { 'x-dc-key': server.key }
  if (route.auth === 'admin') return { authorization: `Bearer ${server.app.dcgate.adminToken}` }
  return {}
}

/** A query that reaches the handler: the capture routes need the site's cop_key. */
export function baseQuery(server: HostileServer, route: AnyRoute): Record<string, string> {
  return route.tags?.includes('Capture') && route.path !== '/tls/ask' ? { cop_key: server.copKey } : {}
}

const SID = 'hostile_session_0001'
const VID = 'hostile_visitor_0001'
const AUTOMATION = JSON.parse(readFileSync(new URL('../sources/fixtures/automation-conversion.json', import.meta.url), 'utf8')) as object

/** A body each known route takes (or nearly); a route without a sample gets a generic one. */
export function sampleBody(server: HostileServer, route: AnyRoute): Record<string, unknown> {
  const collect = { v: 1, sid: SID, vid: VID, consent: 'granted', hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/', title: 'Home' }, { t: 'event', ts: Date.now(), url: 'https://shop.example/', name: 'Purchase', props: { order_id: 'A-1', value: 10, currency: 'EUR', note: 'gift' } }] }
  const identify = { v: 1, sid: SID, vid: VID, email: 'ann@shop.example', via: 'form', consent: 'granted', fields: { first_name: 'Ann', last_name: 'Example', phone: '+44 20 7946 0958' } }
  const worker = { ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64)' }
  // Segment's routes take the private key in the body (writeKey), as Segment documents.
  const track = { type: 'track', event: 'Order Completed', messageId: 'hostile-segment-1', userId: 'u-1', properties: { revenue: 10, currency: 'USD', order_id: 'S-1' }, context: { ip: '203.0.113.7', page: { url: 'https://shop.example/thanks?gclid=G-1' }, traits: { email: 'ann@shop.example' } } }
  const samples: Record<string, Record<string, unknown>> = {
    'POST /collect': collect,
    'POST /collect/worker': { ...collect, ...worker },
    'POST /identify': identify,
    'POST /identify/worker': { ...identify, ...worker },
    // A held event: its row keeps the most columns (IP, user agent, the email for the release).
    'POST /api/v1/conversions/automation': { ...AUTOMATION, event: 'qualified_lead', messageId: `hostile-${Math.random()}` },
    'POST /api/v1/crm-release/:api_key/:secret': { event_name: 'qualified_lead', email: 'ann@shop.example' },
    'POST /public/data-deletion/request': { email: 'ann@shop.example', cop_key: server.copKey, pageUrl: 'https://shop.example/privacy' },
    'POST /api/v1/data-deletion': { email: 'nobody@shop.example' },
    'POST /api/v1/services/email/check': { email: 'ann@shop.example' },
    'POST /admin/api/sites/:id/keys': { name: 'hostile' },
    'POST /admin/api/sites/:id/deliveries/retry': { failed: true },
    'POST /v1/track': { ...track, writeKey: server.key },
    'POST /v1/identify': { type: 'identify', userId: 'u-1', traits: { email: 'ann@shop.example' }, writeKey: server.key },
    'POST /v1/page': { type: 'page', userId: 'u-1', name: 'Home', writeKey: server.key },
    'POST /v1/batch': { writeKey: server.key, sentAt: new Date().toISOString(), batch: [track] },
  }
  return structuredClone(samples[`${route.method} ${route.path}`] ?? { name: 'x', email: 'ann@shop.example', value: 1 })
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** Paths to every string, number and boolean leaf of a sample (and of its objects and arrays). */
export function leafPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((item, index) => leafPaths(item, [...path, index]))
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => leafPaths(item, [...path, key]))
  return path.length ? [path] : []
}

/** A copy of `body` with the value at `path` replaced. */
export function withValue(body: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(body) as Record<string | number, unknown>
  let at = copy
  for (const step of path.slice(0, -1)) at = at[step] as Record<string | number, unknown>
  at[path.at(-1)!] = value
  return copy
}

/** 10,000 nested arrays, as JSON text (JSON.stringify itself overflows on it). */
export const DEEP = `${'['.repeat(10_000)}${']'.repeat(10_000)}`
const DEEP_MARK = '"__deep__"'

/** JSON text of a body where the value DEEP_VALUE stands for the deep nesting. */
export function toJson(body: unknown): string {
  return JSON.stringify(body).replaceAll(DEEP_MARK, DEEP)
}
export const DEEP_VALUE = '__deep__'

/** The hostile replacements for one leaf, by name; a text route refuses the first two or cleans them. */
export const HOSTILE_VALUES = {
  nul: (text: string) => `${text}\u0000tail`,
  surrogate: (text: string) => `${text}\uD83D`,
  lowSurrogate: (text: string) => `\uDE00${text}`,
  overLong: () => 'x'.repeat(100_000),
  wrongType: (text: string) => (text === '' ? 0 : { nested: [text] }),
  number: () => 1e308,
  deep: () => DEEP_VALUE,
} as const satisfies Record<string, (text: string) => unknown>

export type HostileKind = keyof typeof HOSTILE_VALUES

/** A signed webhook, as each source's sender signs it. */
export function signedHeaders(source: string, raw: string): Record<string, string> {
  const hmac = (text: string) => createHmac('sha256', SECRET).update(text)
  switch (source) {
    case 'shopify': return { 'x-shopify-hmac-sha256': hmac(raw).digest('base64'), 'x-shopify-topic': 'orders/paid' }
    case 'woocommerce': return { 'x-wc-webhook-signature': hmac(raw).digest('base64'), 'x-wc-webhook-topic': 'order.updated' }
    case 'stripe': {
      const t = Math.floor(Date.now() / 1000)
      return { 'stripe-signature': `t=${t},v1=${createHmac('sha256', `whsec_${SECRET}`).update(`${t}.${raw}`).digest('hex')}` }
    }
    case 'make': return { 'x-dcgate-signature': `sha256=${hmac(raw).digest('hex')}` }
    default: return {}
  }
}

/** The fixture a source's tests use, as text (Shopify's 64-bit ids would lose digits through JSON.parse). */
export function webhookFixture(source: string): string {
  const file = {
    shopify: 'shopify-orders-paid.json',
    woocommerce: 'woocommerce-order-paid.json',
    stripe: 'stripe-payment-intent-succeeded.json',
  }[source] ?? 'automation-conversion.json'
  return readFileSync(new URL(`../sources/fixtures/${file}`, import.meta.url), 'utf8')
}
