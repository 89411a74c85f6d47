import { createConsola, type LogObject } from 'consola'
import { createStorage, type Storage } from 'unstorage'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { resolveConfig } from '../../core/config/load.ts'
import { createSiteDirectory, type SiteDirectory } from '../../core/sites/directory.ts'
import type { RunPrepared } from '../../core/db/prepared.ts'
import { createScheduler, type Scheduler } from '../../core/jobs/scheduler.ts'
import { createFirstPartyChecker, scheduleFirstPartyChecks, type FirstPartyChecker, type FirstPartyCheckerOptions, type FirstPartyJobOptions } from '../../plugins/capture/first-party/state.ts'
import { createDnsResolver } from '../../plugins/capture/first-party/verify.ts'
import { startFakeDns, type FakeDns } from '../fakes/dns.ts'

const SCRIPT_HOST = 'scripts.dcgate.test'

let dns: FakeDns
let storage: Storage
let logs: LogObject[]
const started: FirstPartyChecker[] = []
const schedulers: Scheduler[] = []

beforeAll(async () => {
  dns = await startFakeDns({ [SCRIPT_HOST]: { A: ['203.0.113.10'] } })
})
afterAll(() => dns?.close())
beforeEach(() => {
  storage = createStorage()
  logs = []
  dns.set('t.shop.test', { CNAME: SCRIPT_HOST })
  dns.set('t.other.test', { CNAME: 'elsewhere.test' })
})
afterEach(async () => {
  await Promise.all(schedulers.splice(0).map((scheduler) => scheduler.stop()))
  for (const checker of started.splice(0)) checker.stop()
})

function sites(): SiteDirectory {
  const config = resolveConfig({
    sites: [
      { id: 'shop', name: 'Shop', firstPartyHost: 'T.Shop.Test' },
      { id: 'other', name: 'Other', firstPartyHost: 't.other.test' },
      { id: 'plain', name: 'Plain' },
    ],
  }, {})
  return createSiteDirectory(config.sites.map((site, i) => ({
    id: site.id, name: site.name, copKey: `cop_${'x'.repeat(19)}${i}`, releaseSecret: 's'.repeat(43), status: 'active', plan: 'free', config: site,
  })))
}

function checker(options: Partial<FirstPartyCheckerOptions> = {}): FirstPartyChecker {
  const logger = createConsola({ level: 4, reporters: [{ log: (entry) => void logs.push(entry) }] })
  const created = createFirstPartyChecker({
    sites: sites(), storage, scriptHost: SCRIPT_HOST, logger,
    resolver: createDnsResolver([dns.server], { timeoutMs: 300, tries: 1 }),
    ...options,
  })
  started.push(created)
  return created
}

/** Instance jobs never touch the database. */
const noDatabase: RunPrepared = () => Promise.reject(new Error('no database in this test'))

/** Runs the checker's jobs as the app does from app:ready, on a scheduler of its own; resolves after the first round. */
async function run(fp: FirstPartyChecker, jobs: FirstPartyJobOptions): Promise<Scheduler> {
  const scheduler = createScheduler({ prepared: noDatabase, report: (error) => void logs.push({ type: 'error', args: [error] } as LogObject) })
  schedulers.push(scheduler)
  scheduleFirstPartyChecks(scheduler.schedule, fp, jobs)
  scheduler.start()
  await fp.start()
  return scheduler
}

const messages = (type: string) => logs.filter((entry) => entry.type === type).map((entry) => entry.args.join(' '))

describe('the first-party checker', () => {
  it('checks every configured host once at start; isVerified answers from memory', async () => {
    const fp = checker()
    expect(fp.isVerified('t.shop.test')).toBe(false)
    await fp.start()
    expect(fp.isVerified('t.shop.test')).toBe(true)
    expect(fp.isVerified('T.SHOP.TEST:443')).toBe(true)
    expect(fp.isVerified('t.other.test')).toBe(false)
    expect(fp.isVerified(SCRIPT_HOST)).toBe(false)
    expect(fp.siteOf('t.shop.test')).toBe('shop')
    expect(messages('info')).toEqual([`first-party host t.shop.test verified (points to ${SCRIPT_HOST})`])
    expect(messages('warn')).toEqual([`first-party host t.other.test is not verified: CNAME points to elsewhere.test, expected ${SCRIPT_HOST}; create: t.other.test CNAME ${SCRIPT_HOST} (DNS only behind a CDN proxy)`])
  })

  it('stores each outcome under first-party:<host>', async () => {
    await checker().start()
    expect(await storage.getItem('first-party:t.shop.test')).toEqual({
      host: 't.shop.test', siteId: 'shop', verified: true, target: SCRIPT_HOST, checkedAt: expect.any(String), verifiedAt: expect.any(String),
    })
    expect(await storage.getItem('first-party:t.other.test')).toMatchObject({ host: 't.other.test', siteId: 'other', verified: false, reason: expect.stringContaining('elsewhere.test') })
  })

  it('re-checks on the interval, logs the change, and stops re-checking when the app closes', async () => {
    const fp = checker()
    const scheduler = await run(fp, { intervalMs: 40 })
    dns.set('t.shop.test', undefined)
    await vi.waitFor(() => expect(fp.isVerified('t.shop.test')).toBe(false), { timeout: 3000 })
    expect(messages('warn')).toContain(`first-party host t.shop.test is no longer verified: no CNAME record for t.shop.test (the name does not exist in DNS); create: t.shop.test CNAME ${SCRIPT_HOST} (DNS only behind a CDN proxy)`)

    dns.set('t.other.test', { CNAME: SCRIPT_HOST })
    await vi.waitFor(() => expect(fp.isVerified('t.other.test')).toBe(true), { timeout: 3000 })

    await scheduler.stop()
    fp.stop()
    await new Promise((resolve) => setTimeout(resolve, 100)) // a round already under way finishes
    const asked = dns.queries.length
    dns.set('t.shop.test', { CNAME: SCRIPT_HOST })
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(dns.queries.length).toBe(asked)
    expect(fp.isVerified('t.shop.test')).toBe(false)
  })

  it('keeps a verified host verified while DNS fails, within the grace period only', async () => {
    const fp = checker()
    await fp.start()
    dns.set('t.shop.test', { rcode: 'SERVFAIL' })
    const { status, result } = await fp.check('t.shop.test')
    expect(result).toMatchObject({ verified: false, temporary: true })
    expect(status).toMatchObject({ verified: true, lastError: 'DNS lookup of t.shop.test failed (ESERVFAIL); try again later' })
    expect(fp.isVerified('t.shop.test')).toBe(true)

    const strict = checker({ graceMs: 0 })
    expect((await strict.check('t.shop.test')).status).toMatchObject({ verified: false, reason: expect.stringContaining('ESERVFAIL') })
    expect(strict.isVerified('t.shop.test')).toBe(false)
  })

  it('shares outcomes between instances through the storage', async () => {
    const first = checker()
    const second = checker()
    dns.set('t.other.test', { CNAME: SCRIPT_HOST })
    await first.check('t.other.test')
    expect(second.isVerified('t.other.test')).toBe(false)
    expect(await second.isVerifiedShared('t.other.test')).toBe(true)
    expect(second.isVerified('t.other.test')).toBe(true)


    // An instance whose own DNS view says no learns the other instance's verdict on its next sync.
    const blind = await startFakeDns()
    try {
      const third = checker({ resolver: createDnsResolver([blind.server], { timeoutMs: 300, tries: 1 }) })
      await run(third, { syncIntervalMs: 30, intervalMs: 60_000 })
      expect(third.isVerified('t.shop.test')).toBe(false)
      await first.check('t.shop.test')
      await vi.waitFor(() => expect(third.isVerified('t.shop.test')).toBe(true), { timeout: 2000 })
    }
    finally {
      await blind.close()
    }
  })

  it('answers isVerifiedShared false for a host no site names, without touching DNS', async () => {
    const fp = checker()
    const asked = dns.queries.length
    expect(await fp.isVerifiedShared('random.attacker.test')).toBe(false)
    expect(dns.queries.length).toBe(asked)
  })
})
