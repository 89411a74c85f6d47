import { AsyncLocalStorage } from 'node:async_hooks'
import autocannon from 'autocannon'
import { H3, bodyLimit, serve, HTTPError, type Middleware } from 'h3'
import { LRUCache } from 'lru-cache'
import { createDcgateStorage } from '../../../core/storage.ts'
import { createKeyVerifier } from '../../../core/auth/verifier.ts'
import { createKeyGuard } from '../../../core/auth/guards.ts'
import { hashKey, generatePrivateKey } from '../../../core/auth/keys.ts'
import { createSiteDirectory, type ActiveSite } from '../../../core/sites/directory.ts'
import { errorBody, jsonResponse } from '../../../core/http/errors.ts'

const variant = process.env.V ?? 'bare'
const secs = Number(process.env.SECS ?? 5)
const rounds = Number(process.env.ROUNDS ?? 3)
if (process.env.ALS) { const als = new AsyncLocalStorage(); als.run({}, () => {}) }

const site = { id: 'demo', name: 'Demo', copKey: 'x'.repeat(20), releaseSecret: 'y'.repeat(30), status: 'active', plan: 'free', config: {} } as unknown as ActiveSite
const sites = createSiteDirectory([site])
const key = generatePrivateKey()
const storage = createDcgateStorage(undefined)
const fakeOrm = { em: { getConnection: () => ({ execute: async (sql: string) => sql.startsWith('select') ? [{ id: 'k1', site_id: 'demo' }] : [] }) } } as never
const verifier = createKeyVerifier({ orm: fakeOrm, storage, sites, onBackgroundError: () => {} })

let app: H3
const body = () => ({ success: true, app_id: 'demo', identified_user_count: 0 })
if (variant === 'bare') {
  app = new H3()
  app.get('/health', body)
} else {
  app = new H3({ silent: true, onError: async (error) => jsonResponse(error.status, errorBody(error), error.headers) })
  if (!process.env.NOLIMIT) app.use(bodyLimit(1_048_576))
  let guard: Middleware
  if (variant === 'replica') guard = createKeyGuard(verifier, async () => {})
  else if (variant === 'noop-guard') guard = (event) => { event.context.site = site; event.context.apiKeyId = 'k1' }
  else if (variant === 'hash-only') guard = (event) => { const k = event.req.headers.get('x-dc-key')!.trim(); if (!/^dcp_[\w-]{32,128}$/.test(k)) throw new HTTPError(401); hashKey(k); event.context.site = site }
  else if (variant === 'direct-lru') {
    // the same verdict cache, held as objects in an lru-cache instead of going through unstorage
    const memo = new LRUCache<string, { k: string | null, s: string | null, x: number }>({ max: 100_000 })
    guard = async (event) => {
      const k = event.req.headers.get('x-dc-key')?.trim()
      if (!k || !/^dcp_[\w-]{32,128}$/.test(k)) throw new HTTPError(401)
      const hash = hashKey(k)
      let hit = memo.get(hash)
      if (!hit) { await verifier.verify(k); hit = { k: 'k1', s: 'demo', x: Date.now() + 300_000 }; memo.set(hash, hit) }
      if (hit.x <= Date.now() || !hit.s) throw new HTTPError(401)
      event.context.site = sites.byId(hit.s)
    }
  }
  else throw new Error(variant)
  app.on('GET', '/health', (event) => ({ success: true, app_id: event.context.site!.id, identified_user_count: 0 }), { middleware: [guard!] })
}
const s = serve(app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false }); await s.ready()
const url = `${s.url}health`, headers = { 'x-dc-key': key }
const first = await fetch(url, { headers }); if (first.status !== 200) throw new Error(`${first.status} ${await first.text()}`)
const run = (d: number) => new Promise<any>((res, rej) => autocannon({ url, headers, connections: 10, duration: d }, (e, r) => e ? rej(e) : res(r)))
await run(2)
const out: string[] = []
for (let i = 0; i < rounds; i++) {
  const c0 = process.cpuUsage()
  const r = await run(secs)
  const c = process.cpuUsage(c0)
  if (r.non2xx || r.errors) throw new Error('non2xx')
  out.push(`${Math.round(r['2xx'] / r.duration)}/${((c.user + c.system) / r['2xx']).toFixed(1)}`)
}
console.log(`${(variant + (process.env.ALS ? '+ALS' : '') + (process.env.NOLIMIT ? '-bodyLimit' : '')).padEnd(22)} req/s / cpu-us-per-req: ${out.join('  ')}`)
await s.close(true); process.exit(0)
