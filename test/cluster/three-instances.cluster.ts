import { randomBytes } from 'node:crypto'
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAllPlatforms, PLATFORMS, type AllPlatforms } from '../fakes/all-platforms.ts'
import { startFakeDns, type FakeDns } from '../fakes/dns.ts'
import type { FakeHubspot } from '../fakes/hubspot.ts'
import { freePort, tempDir } from '../helpers/server-process.ts'
import { startSlowMeta, startWatchedHubspot, type SlowMeta } from './fakes.ts'
import { killInstances, startInstance, type Instance } from './instances.ts'
import { claimRedisDatabase, createClusterDatabase, startCaddy, type Caddy } from './services.ts'

// docs/deployment.md, "Many instances", shown: three dcgate processes, each with its own data dir, on one PostgreSQL
// database and one Redis, behind Caddy (docs/deployment/Caddyfile.cluster, round robin). The fakes run here.
const DATABASE_URL = process.env.DATABASE_URL
const REDIS_URL = process.env.REDIS_URL
const ADMIN_TOKEN = 'cluster-admin-token-0123456789abcdef'
const SHOP_COP_KEY = 'cop_clustershop0000001'
const SCRIPT_HOST = 'scripts.cluster.test'
const FIRST_PARTY_HOST = 't.shop.test'
const POLL_SECONDS = 10
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'

const cleanups: (() => Promise<unknown> | unknown)[] = []
let root: string
let instances: Instance[]
let caddy: Caddy
let platforms: AllPlatforms
let slow: SlowMeta
let dns: FakeDns
let crm: FakeHubspot
let pollTimes: number[]
let query: <T>(text: string, params?: unknown[]) => Promise<T[]>
let burstKey: string

beforeAll(async () => {
  if (!DATABASE_URL || !REDIS_URL) throw new Error('The cluster test needs DATABASE_URL (a PostgreSQL it may create databases on) and REDIS_URL')
  root = tempDir('dcgate-cluster-')
  cleanups.push(() => rmSync(root, { recursive: true, force: true }))
  const database = await createClusterDatabase(DATABASE_URL)
  cleanups.push(database.drop)
  query = database.query
  const redis = await claimRedisDatabase(REDIS_URL)
  cleanups.push(redis.release)
  ;[platforms, slow, dns] = await Promise.all([startAllPlatforms(), startSlowMeta(), startFakeDns()])
  cleanups.push(() => platforms.close(), () => slow.close(), () => dns.close(), () => slow.release())
  const watched = await startWatchedHubspot()
  crm = watched.crm
  pollTimes = watched.pollTimes
  cleanups.push(watched.stop, () => crm.close())

  // One config file for all three: what must be shared (database, Redis, the admin token) comes by environment.
  const configFile = join(root, 'dcgate.config.mjs')
  writeFileSync(configFile, `export default ${JSON.stringify({
    plugins: ['intake', 'capture', 'release', 'export'],
    // A lease shorter than the default 60 s, so rows a killed instance held are taken over within seconds; still
    // well above one platform call (docs/delivery.md, "At least once").
    delivery: { leaseSeconds: 10, requestTimeoutMs: 4000, workerIntervalMs: 200 },
    // Hits stay in the journal (not flushed) for a minute: what a kill leaves behind.
    capture: { dnsServers: [dns.server], scriptHost: SCRIPT_HOST, flushIntervalMs: 60_000 },
    release: { pollIntervalSeconds: POLL_SECONDS },
    sites: [
      { id: 'burst', name: 'Burst', destinations: platforms.destinations },
      { id: 'slow', name: 'Slow', destinations: { meta: { pixelId: '1234567890', accessToken: 'token', baseUrl: slow.url } } },
      { id: 'shop', name: 'Shop', copKey: SHOP_COP_KEY, consent: { banner: 'off' }, firstPartyHost: FIRST_PARTY_HOST },
      {
        id: 'crm', name: 'CRM',
        events: [{ key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule', release: 'when_qualified' }],
        crm: { hubspot: { accessToken: crm.accessToken, eventName: 'demo_booked', baseUrl: crm.url } },
      },
    ],
  }, null, 2)}\n`)
  // One server secret for all, as docs/deployment.md says: what one instance seals (rotated tokens), the others open.
  const env = { DATABASE_URL: database.url, REDIS_URL: redis.url, DCGATE_ADMIN_TOKEN: ADMIN_TOKEN, DCGATE_SERVER_SECRET: randomBytes(32).toString('base64url') }
  cleanups.push(killInstances)
  // One after the other: the first applies the migrations, the others find none pending.
  instances = []
  for (const name of ['a', 'b', 'c']) instances.push(await startInstance({ name, root, configFile, env }))

  const [http, https, lb, ask] = [await freePort(), await freePort(), await freePort(), await freePort()]
  caddy = await startCaddy({ upstreams: instances.map((i) => `127.0.0.1:${i.port}`), ports: { http, https, lb, ask }, stateDir: join(root, 'caddy') })
  cleanups.push(() => caddy.stop())
  burstKey = await createKey(instances[0]!, 'burst', 'burst')
})

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup()
    }
    catch (error) {
      console.error('cluster cleanup:', error)
    }
  }
})

async function createKey(instance: Instance, site: string, name: string): Promise<string> {
  const created = await instance.cli(['keys', 'create', '--site', site, '--name', name, '--json'])
  expect(created.code, created.stderr).toBe(0)
  return (JSON.parse(created.stdout) as { key: string }).key
}

const health = (base: string, key: string) => fetch(`${base}/api/v1/export/health`, { headers: { 'x-dc-key': key }, signal: AbortSignal.timeout(10_000) })
  .then(async (response) => {
    await response.arrayBuffer()
    return response.status
  })

/** A Purchase with what every platform matches on or requires: email, phone, click ids, the page, the buyer's address and browser. */
function conversion(messageId: string, base: string, key: string) {
  return fetch(`${base}/api/v1/conversions/automation`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, signal: AbortSignal.timeout(60_000),
    body: JSON.stringify({
      event: 'Purchase', messageId, properties: { value: 10, currency: 'EUR', order_id: messageId },
      context: { traits: { email: `${messageId}@example.com`, phone: '+1 212 555 0142' }, identifiers: { gclid: `Cj0-${messageId}`, fbclid: `IwAR-${messageId}` }, page: { url: 'https://shop.example/checkout' }, ip: '203.0.113.9', userAgent: CHROME },
    }),
  })
}

/** This instance's dcgate_conversions_total for the automation route, from its Prometheus text. */
async function conversionsCounted(base: string): Promise<{ accepted: number, duplicate: number }> {
  const text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) })).text()
  const value = (outcome: string) => text.split('\n')
    .filter((line) => line.startsWith('dcgate_conversions_total{') && line.includes('source="automation"') && line.includes(`outcome="${outcome}"`))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0)
  return { accepted: value('accepted'), duplicate: value('duplicate') }
}

describe('three instances behind Caddy', () => {
  it('a key deleted through one instance is refused by every instance at its next request', async () => {
    const key = await createKey(instances[0]!, 'burst', 'to-delete')
    expect(await Promise.all(instances.map((i) => health(i.url, key)))).toEqual([200, 200, 200])
    const deleted = await instances[1]!.cli(['keys', 'delete', key.slice(0, 12), '--site', 'burst'])
    expect(deleted.code, deleted.stderr).toBe(0)
    const started = Date.now()
    // Each instance's first request after the delete: a verdict cached there would still say 200.
    expect(await Promise.all(instances.map((i) => health(i.url, key)))).toEqual([401, 401, 401])
    console.log(`cluster: deleted key refused by all three ${Date.now() - started} ms after the delete answered`)
    expect(await health(caddy.url, key)).toBe(401)
  })

  it('a first-party host verified through one instance is allowed a certificate by all', async () => {
    const ask = (base: string) => fetch(`${base}/tls/ask?domain=${FIRST_PARTY_HOST}`).then((r) => r.status)
    // Each instance checked the host at boot, before the DNS record existed.
    expect(await Promise.all(instances.map((i) => ask(i.url)))).toEqual([404, 404, 404])
    dns.set(FIRST_PARTY_HOST, { CNAME: SCRIPT_HOST })
    const verified = await instances[2]!.cli(['sites', 'verify-domain', 'shop', '--json'])
    expect(verified.code, verified.stderr).toBe(0)
    expect(JSON.parse(verified.stdout)).toMatchObject({ host: FIRST_PARTY_HOST, verified: true })
    expect(await Promise.all(instances.map((i) => ask(i.url)))).toEqual([200, 200, 200])
    // What Caddy itself asks, through its loopback site (round robin over the three); the public sites refuse it.
    expect(await Promise.all([1, 2, 3].map(() => ask(caddy.askUrl)))).toEqual([200, 200, 200])
    expect(await ask(caddy.url)).toBe(404)
  })

  it('a burst spread over all instances, each conversion sent twice, reaches each of eight platforms exactly once', async () => {
    const ids = Array.from({ length: 60 }, (_, i) => `burst-${i}`)
    const answers: string[] = []
    // Eight at a time through Caddy; the copy goes out right after the first, to the next instance in the round.
    const queue = ids.flatMap((id) => [id, id])
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        const response = await conversion(id, caddy.url, burstKey)
        // 202 on every instance: an event a platform's request budget left for the next batch is queued, no error.
        expect(response.status).toBe(202)
        answers.push(JSON.stringify(await response.json()))
      }
    }))
    expect(answers.filter((a) => a.includes('duplicate_delivery_skipped'))).toHaveLength(ids.length)
    // Spread: each instance counted some of them in its own /metrics (open on loopback), and together all of them.
    const counted = await Promise.all(instances.map((i) => conversionsCounted(i.url)))
    for (const count of counted) expect(count.accepted + count.duplicate).toBeGreaterThan(0)
    expect(counted.reduce((sum, c) => ({ accepted: sum.accepted + c.accepted, duplicate: sum.duplicate + c.duplicate }))).toEqual({ accepted: ids.length, duplicate: ids.length })
    await expect.poll(() => platforms.acceptedCounts(), { timeout: 90_000, interval: 500 })
      .toEqual(Object.fromEntries(PLATFORMS.map((p) => [p, ids.length])))
    // Each id on every platform, and no platform holds more than one event per id: exactly once.
    for (const id of ids) expect(platforms.acceptedBy(id)).toEqual([...PLATFORMS])
    expect(await query(`select status, count(*)::int as n from deliveries where site_id = 'burst' group by status`)).toEqual([{ status: 'sent', n: ids.length * PLATFORMS.length }])
  }, 180_000)

  it('an instance killed with kill -9 mid-delivery: the others finish its leased rows; its capture journal is written when it comes back', async () => {
    const victim = instances[0]!
    const slowKey = await createKey(instances[1]!, 'slow', 'slow')
    // Hits the victim acknowledged (202) and only journaled: its batches flush after a minute.
    const session = 'clustersess0000001x'
    const hits = Array.from({ length: 5 }, (_, i) => ({ t: 'pageview', ts: Date.now(), url: `https://shop.example/p${i}` }))
    const collected = await fetch(`${victim.url}/collect?cop_key=${SHOP_COP_KEY}`, {
      method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME },
      body: JSON.stringify({ v: 1, sid: session, vid: 'clustervisitor01', consent: 'unknown', hits }),
    })
    expect(collected.status).toBe(202)
    const journal = join(victim.dataDir, 'capture-journal')
    expect(readdirSync(journal).some((f) => statSync(join(journal, f)).size > 0)).toBe(true)

    // Conversions sent straight to the victim: it claims their rows and calls the platform, which holds the calls.
    const ids = ['slow-1', 'slow-2', 'slow-3']
    const inFlight = ids.map((id) => conversion(id, victim.url, slowKey).catch((error: unknown) => error))
    await expect.poll(() => [...slow.held].sort(), { timeout: 30_000, interval: 50 }).toEqual(ids)
    await victim.stop('SIGKILL')
    slow.hang = false
    // Cut off by the kill (or, on a very slow machine, answered once delivery.requestTimeoutMs ran out).
    await Promise.all(inFlight)

    // Once the 10 s lease runs out, a worker of b or c claims each row and sends it.
    await expect.poll(() => ids.map((id) => slow.accepted.get(id) ?? 0), { timeout: 60_000, interval: 250 }).toEqual([1, 1, 1])
    await expect.poll(async () => {
      const report = await instances[1]!.cli(['deliveries', 'list', '--site', 'slow', '--json'])
      return (JSON.parse(report.stdout) as { message_id: string, status: string }[]).map((d) => `${d.message_id} ${d.status}`).sort()
    }, { timeout: 30_000, interval: 500 }).toEqual(ids.map((id) => `${id} sent`))
    expect((await query<{ n: number }>('select count(*)::int as n from page_events where session_id = $1', [session]))[0]!.n).toBe(0)

    // The same instance again, same data dir: it writes the dead process's journal before it listens.
    await victim.restart()
    await expect.poll(async () => (await query<{ n: number }>('select count(*)::int as n from page_events where session_id = $1', [session]))[0]!.n, { timeout: 30_000, interval: 250 }).toBe(hits.length)
    expect(readdirSync(journal).filter((f) => statSync(join(journal, f)).size > 0)).toEqual([])
    expect(await Promise.all(instances.map((i) => health(i.url, burstKey)))).toEqual([200, 200, 200])
  })

  it('a rolling restart (SIGTERM, start, ready, next) answers every request sent through Caddy meanwhile', async () => {
    const statuses = new Map<string, number>()
    let rolling = true
    const clients = Array.from({ length: 4 }, async () => {
      while (rolling) {
        const status = await health(caddy.url, burstKey).then(String, (error: Error) => error.message)
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
      }
    })
    for (const instance of instances) {
      await instance.stop('SIGTERM')
      await instance.restart()
    }
    rolling = false
    await Promise.all(clients)
    console.log(`cluster: rolling restart, answers through Caddy: ${JSON.stringify(Object.fromEntries(statuses))}`)
    expect([...statuses.keys()]).toEqual(['200'])
  }, 300_000)

  it('prints the throughput of three instances through Caddy beside one instance\'s (not an assertion)', async () => {
    const measure = (url: string) => new Promise<number>((resolve, reject) => {
      autocannon({ url: `${url}/api/v1/export/health`, connections: 16, duration: 5, timeout: 10, headers: { 'x-dc-key': burstKey } }, (error, result) => {
        if (error) return reject(error)
        if (result.non2xx > 0) return reject(new Error(`${result.non2xx} answers were not 2xx`))
        resolve(result.requests.average)
      })
    })
    const one = await measure(instances[1]!.url)
    const three = await measure(caddy.url)
    console.log(`cluster throughput, GET /api/v1/export/health with a key: one instance ${one.toFixed(0)} req/s, three behind Caddy ${three.toFixed(0)} req/s (x${(three / one).toFixed(2)}; all share ${(await import('node:os')).availableParallelism()} cores)`)
    expect(one).toBeGreaterThan(0)
  }, 60_000)

  it('ran the CRM poll once per interval across the cluster', async () => {
    // Sampled since before the instances booted; three instances each checking every 5 s would poll three times as often.
    // (A poll cut short by a SIGTERM is freed and run again at once elsewhere, correctly; a poll of the fake takes
    // milliseconds, so the rolling restart's three SIGTERMs are unlikely to land in one.)
    await expect.poll(() => pollTimes.length, { timeout: 60_000, interval: 500 }).toBeGreaterThanOrEqual(3)
    const gaps = pollTimes.slice(1).map((t, i) => t - pollTimes[i]!)
    console.log(`cluster: ${pollTimes.length} HubSpot polls, ${gaps.map((g) => `${(g / 1000).toFixed(1)} s`).join(', ')} apart`)
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual((POLL_SECONDS - 1) * 1000)
  }, 90_000)
})
