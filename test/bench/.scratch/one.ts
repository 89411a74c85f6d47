import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { Session } from 'node:inspector/promises'
import { writeFileSync } from 'node:fs'
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
const session = new Session(); session.connect()
if (process.env.PROF) { await session.post('Profiler.enable'); await session.post('Profiler.setSamplingInterval', { interval: 100 }); await session.post('Profiler.start') }
const cpu0 = process.cpuUsage(); let reqs = 0; const t0 = performance.now()
for (let i = 0; i < rounds; i++) {
  const r = await run(secs)
  reqs += r['2xx']
  const m = process.memoryUsage()
  console.log(which, Math.round(r['2xx'] / r.duration), 'req/s', 'non2xx', r.non2xx, 'heapUsed MB', (m.heapUsed / 1e6).toFixed(1), 'rss', (m.rss / 1e6).toFixed(0))
}
const cpu = process.cpuUsage(cpu0); const wall = performance.now() - t0
console.log(which, 'cpu us/req', ((cpu.user + cpu.system) / reqs).toFixed(1), 'user', (cpu.user / reqs).toFixed(1), 'sys', (cpu.system / reqs).toFixed(1), 'cpu util', ((cpu.user + cpu.system) / 1000 / wall).toFixed(2))
if (process.env.PROF) { const { profile } = await session.post('Profiler.stop'); writeFileSync(process.env.PROF, JSON.stringify(profile)) }
await close(); rmSync(dataDir, { recursive: true, force: true }); process.exit(0)
