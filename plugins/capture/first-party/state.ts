import type { ConsolaInstance } from 'consola'
import type { Storage } from 'unstorage'
import type { PluginContext } from '../../../core/plugin.ts'
import type { SiteDirectory } from '../../../core/sites/directory.ts'
import { normaliseHost, verifyFirstPartyHost, type DnsResolver, type VerifyResult } from './verify.ts'

/** What is remembered of a first-party host, under `first-party:<host>` in the shared storage. */
export interface FirstPartyStatus {
  host: string
  /** The site whose firstPartyHost it is; absent for a host no site names. */
  siteId?: string
  verified: boolean
  /** What the record pointed at on the last check (see VerifyResult.target). */
  target?: string
  /** Why it is not verified. */
  reason?: string
  /** Set while a verified host is kept verified although its last check could not reach DNS. */
  lastError?: string
  /** ISO time of the last check. */
  checkedAt: string
  /** ISO time of the last check that verified it. */
  verifiedAt?: string
}

export interface FirstPartyCheckerOptions {
  sites: SiteDirectory
  storage: Storage
  resolver: DnsResolver
  /** The shared script host every firstPartyHost must point at. */
  scriptHost: string
  /** A verified host stays verified this long while DNS lookups fail (not when the records say no); default 3 days. */
  graceMs?: number
  logger: Pick<ConsolaInstance, 'info' | 'warn' | 'debug'>
}

export interface FirstPartyChecker {
  scriptHost: string
  /** The site that names `host` as its firstPartyHost. */
  siteOf: (host: string) => string | undefined
  /** From the in-process copy, without I/O: called on every capture request. */
  isVerified: (host: string) => boolean
  status: (host: string) => FirstPartyStatus | undefined
  /** Like isVerified, but reads the shared storage first (another instance may have verified it just now). */
  isVerifiedShared: (host: string) => Promise<boolean>
  /** Checks `host` now, stores and returns the outcome; `result` is the raw DNS verdict. */
  check: (host: string) => Promise<{ status: FirstPartyStatus, result: VerifyResult }>
  checkAll: () => Promise<FirstPartyStatus[]>
  /** Re-reads the shared storage, to learn what other instances checked. */
  sync: () => Promise<void>
  /** The first round, once: loads what is stored, then checks every configured host. */
  start: () => Promise<void>
  /** Stops storing outcomes (the app is closing); a later start() begins a new first round. */
  stop: () => void
}

export interface FirstPartyJobOptions {
  /** Re-check every configured host this often; default 6 hours. */
  intervalMs?: number
  /** Re-read the shared storage this often, to learn what other instances checked; default 1 minute. */
  syncIntervalMs?: number
}

const HOUR = 3_600_000
const CONCURRENCY = 8

export function firstPartyKey(host: string): string {
  return `first-party:${normaliseHost(host)}`
}

export function createFirstPartyChecker(options: FirstPartyCheckerOptions): FirstPartyChecker {
  const { storage, resolver, logger } = options
  const scriptHost = normaliseHost(options.scriptHost)
  const graceMs = options.graceMs ?? 72 * HOUR
  const owners = new Map<string, string>()
  for (const site of options.sites.list()) {
    if (site.config.firstPartyHost) owners.set(normaliseHost(site.config.firstPartyHost), site.id)
  }
  const memory = new Map<string, FirstPartyStatus>()
  const pending = new Map<string, Promise<{ status: FirstPartyStatus, result: VerifyResult }>>()
  let first: Promise<void> | undefined
  let stopped = false

  const read = async (host: string): Promise<FirstPartyStatus | undefined> => {
    try {
      return (await storage.getItem<FirstPartyStatus>(firstPartyKey(host))) ?? undefined
    }
    catch (error) {
      logger.debug(`reading the first-party state of ${host} failed`, error)
      return undefined
    }
  }
  const remember = async (status: FirstPartyStatus) => {
    memory.set(status.host, status)
    if (stopped) return
    await storage.setItem(firstPartyKey(status.host), status).catch((error: unknown) => logger.warn(`storing the first-party state of ${status.host} failed`, error))
  }

  const runCheck = async (host: string) => {
    const result = await verifyFirstPartyHost(host, scriptHost, resolver)
    const previous = (await read(host)) ?? memory.get(host)
    const now = new Date()
    const base = { host, ...(owners.has(host) ? { siteId: owners.get(host) } : {}), checkedAt: now.toISOString() }
    const withinGrace = previous?.verified === true && previous.verifiedAt !== undefined && now.getTime() - Date.parse(previous.verifiedAt) < graceMs
    const status: FirstPartyStatus = result.verified
      ? { ...base, verified: true, target: result.target, verifiedAt: base.checkedAt }
      : result.temporary && withinGrace
        ? { ...previous, ...base, verified: true, lastError: result.reason }
        : { ...base, verified: false, target: result.target, reason: result.reason, ...(previous?.verifiedAt ? { verifiedAt: previous.verifiedAt } : {}) }
    report(previous, status, result)
    await remember(status)
    return { status, result }
  }

  const report = (previous: FirstPartyStatus | undefined, status: FirstPartyStatus, result: VerifyResult) => {
    const record = `create: ${status.host} CNAME ${scriptHost} (DNS only behind a CDN proxy)`
    if (status.verified && status.lastError) logger.warn(`first-party host ${status.host}: ${status.lastError}; kept verified for now`)
    else if (status.verified && previous?.verified !== true) logger.info(`first-party host ${status.host} verified (points to ${result.target})`)
    else if (!status.verified && previous?.verified === true) logger.warn(`first-party host ${status.host} is no longer verified: ${status.reason}; ${record}`)
    else if (!status.verified && (!previous || previous.reason !== status.reason)) logger.warn(`first-party host ${status.host} is not verified: ${status.reason}; ${record}`)
    else logger.debug(`first-party host ${status.host} unchanged (verified: ${status.verified})`)
  }

  const check = (hostInput: string) => {
    const host = normaliseHost(hostInput)
    let running = pending.get(host)
    if (!running) {
      running = runCheck(host).finally(() => pending.delete(host))
      pending.set(host, running)
    }
    return running
  }

  const checkAll = async () => {
    const hosts = [...owners.keys()]
    const statuses: FirstPartyStatus[] = []
    for (let i = 0; i < hosts.length; i += CONCURRENCY) {
      statuses.push(...(await Promise.all(hosts.slice(i, i + CONCURRENCY).map(async (host) => (await check(host)).status))))
    }
    return statuses
  }

  const sync = async () => {
    await Promise.all([...owners.keys()].map(async (host) => {
      const stored = await read(host)
      if (stored) memory.set(host, stored)
    }))
  }

  return {
    scriptHost,
    siteOf: (host) => owners.get(normaliseHost(host)),
    isVerified: (host) => memory.get(hostOnly(host))?.verified === true,
    status: (host) => memory.get(normaliseHost(host)),
    async isVerifiedShared(hostInput) {
      const host = normaliseHost(hostInput)
      if (!owners.has(host)) return false
      const stored = await read(host)
      if (stored) memory.set(host, stored)
      return memory.get(host)?.verified === true
    },
    check,
    checkAll,
    sync,
    start() {
      if (first) return first
      stopped = false
      first = sync().then(checkAll).then(() => undefined)
      return first
    },
    stop() {
      first = undefined
      stopped = true
    },
  }
}

/**
 * The checker's periodic work, on every instance (each keeps its own copy in memory): the first round when the app
 * is ready, then a re-check of every host on the interval, and a read of what other instances stored every minute.
 */
export function scheduleFirstPartyChecks(schedule: PluginContext['schedule'], checker: FirstPartyChecker, options: FirstPartyJobOptions = {}): void {
  let begun = false
  const round = () => {
    if (begun) return checker.checkAll()
    begun = true
    return checker.start()
  }
  schedule({ name: 'capture:first-party-check', everyMs: options.intervalMs ?? 6 * HOUR, scope: 'instance', run: round })
  schedule({ name: 'capture:first-party-sync', everyMs: options.syncIntervalMs ?? 60_000, scope: 'instance', atStart: false, run: () => checker.sync() })
}

/** A Host header's name: lower case, without a port or a trailing dot. */
function hostOnly(host: string): string {
  return normaliseHost(host.replace(/:\d+$/, ''))
}
