import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { createConsola } from 'consola'
import { H3, serve } from 'h3'
import { resolveConfig } from '../../../core/config/load.ts'
import { startServer } from '../../../core/server.ts'

const which = process.env.ONLY ?? 'dcgate'
const secs = Number(process.env.SECS ?? 10)
const rounds = Number(process.env.ROUNDS ?? 1)
const dataDir = mkdtempSync(join(tmpdir(), 'dcgate-prof-'))
let url: string, headers: Record<string, string> = {}, close: () => Promise<void>
if (which === 'dcgate') {
  const config = resolveConfig({ dataDir, server: { port: 0, host: '127.0.0.1' }, sites: [{ id: 'demo', name: 'Demo' }] }, {})
  const running = await startServer(config, { banner: false, logger: createConsola({ level: -999 }) })
  const r = await fetch(`${running.url}/admin/api/sites/demo/keys`, { method: 'POST', headers: { authorization: `Bearer ${running.dcgate.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x' }) })
  const { key } = await r.json() as { key: string }
  url = `${running.url}/api/v1/export/health`; headers = { 'x-dc-key': key }
  console.log((await fetch(url, { headers })).status)
  close = running.stop
} else {
  const app = new H3(); app.get('/health', () => ({ success: true, app_id: 'demo', identified_user_count: 0 }))
  const s = serve(app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false }); await s.ready()
  url = `${s.url}health`; close = () => s.close(true)
}
const run = (d: number) => new Promise<any>((res, rej) => autocannon({ url, headers, connections: 10, duration: d }, (e, r) => e ? rej(e) : res(r)))
await run(2)
for (let i = 0; i < rounds; i++) {
  const r = await run(secs)
  const m = process.memoryUsage()
  console.log(which, Math.round(r['2xx'] / r.duration), 'req/s', 'non2xx', r.non2xx, 'heapUsed MB', (m.heapUsed / 1e6).toFixed(1), 'rss', (m.rss / 1e6).toFixed(0))
}
await close(); rmSync(dataDir, { recursive: true, force: true }); process.exit(0)
