import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts'

// The poison hits of issue 15 (a url of "\u0000", props holding "\ud800") against `dcgate start` itself, killed with
// -9 while they wait in the capture journal: the server restarts, replays the journal, and stores every hit,
// poison ones cleaned, and keeps storing hits after.

const COP_KEY = 'cop_hostile_restart_0001'
// Flushes wait a minute: every hit is still in the journal when the process is killed.
const CONFIG = `export default {
  plugins: ['capture', 'export'],
  capture: { flushIntervalMs: 60000 },
  sites: [{ id: 'demo', name: 'Demo', copKey: '${COP_KEY}', domains: ['shop.example'] }],
}
`

let server: ServerProcess

beforeAll(async () => {
  server = await startServerProcess({ config: CONFIG })
}, 120_000)
afterAll(() => server?.close())

const hit = (sid: string, url: string, extra = '') => `{"v":1,"sid":"${sid}","vid":"restart_visitor_01","consent":"granted","hits":[{"t":"pageview","ts":${Date.now()},"url":"${url}"${extra}}]}`

async function collect(body: string): Promise<number> {
  const response = await fetch(`${server.url}/collect?cop_key=${COP_KEY}`, { method: 'POST', headers: { 'content-type': 'text/plain', origin: 'https://shop.example' }, body })
  await response.arrayBuffer()
  return response.status
}

async function sessions(key: string): Promise<{ session_id: string, page_count: number, landing_url: string | null }[]> {
  const response = await fetch(`${server.url}/api/v1/export/sessions?limit=100&until=${new Date(Date.now() + 60_000).toISOString()}`, { headers: { 'x-dc-key': key } })
  expect(response.status).toBe(200)
  return ((await response.json()) as { data: { session_id: string, page_count: number, landing_url: string | null }[] }).data
}

describe('poison hits in the capture journal across a kill -9 and a restart', () => {
  it('stores every hit, the poison ones cleaned, and keeps storing after', async () => {
    // JSON text as a page writes it: the NUL and the lone surrogate as escapes.
    expect(await collect(hit('restart_poison_001', '\\u0000'))).toBe(202)
    expect(await collect(hit('restart_poison_002', 'https://shop.example/p', ',"title":"cut \\ud800"'))).toBe(202)
    expect(await collect(hit('restart_good_00001', 'https://shop.example/good'))).toBe(202)

    expect(await server.stop('SIGKILL')).toBeNull()
    await server.restart()
    expect(await collect(hit('restart_good_00002', 'https://shop.example/after'))).toBe(202)
    expect(await server.stop('SIGTERM')).toBe(0)
    await server.restart()

    const created = await server.cli(['keys', 'create', '--site', 'demo', '--name', 'restart'])
    const key = /dcp_[\w-]+/.exec(created.stdout)?.[0]
    expect(key, created.stdout + created.stderr).toBeDefined()
    const rows = (await sessions(key!)).map(({ session_id, page_count, landing_url }) => ({ session_id, page_count, landing_url }))
    expect(rows.sort((a, b) => a.session_id.localeCompare(b.session_id))).toEqual([
      { session_id: 'restart_good_00001', page_count: 1, landing_url: 'https://shop.example/good' },
      { session_id: 'restart_good_00002', page_count: 1, landing_url: 'https://shop.example/after' },
      { session_id: 'restart_poison_001', page_count: 1, landing_url: '' },
      { session_id: 'restart_poison_002', page_count: 1, landing_url: 'https://shop.example/p' },
    ])
  }, 240_000)
})
