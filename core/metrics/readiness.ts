import type { PublicSunset } from '../api-sunsets.ts'
import type { RunPrepared } from '../db/prepared.ts'
import { withTimeout } from './sample.ts'

/** The database must answer `select 1` this fast for the instance to be ready. */
export const READY_QUERY_TIMEOUT_MS = 2000

export interface ReadinessReport {
  ready: boolean
  /** Each check and whether it passed; `failed` names the first one that did not. */
  checks: { booted: boolean, database: boolean }
  failed?: 'booted' | 'database'
  /** Vendor API versions in use that retire soon: a reason to upgrade, not a reason to take traffic away. */
  warnings?: PublicSunset[]
}

export interface Readiness {
  /** Boot finished: migrations applied, sites synced, every plugin set up (capture's journal replayed). */
  markBooted: () => void
  /** Shutting down: not ready any more, so a load balancer stops sending new requests. */
  markStopping: () => void
  check: () => Promise<ReadinessReport>
}

const PING = { name: 'dcgate_ready', text: 'select 1 as ok' }

/**
 * What GET /readyz answers. The database check runs at most once at a time: probes arriving while one waits share
 * its answer, so a stalled database does not collect a pile of waiting queries from an eager load balancer.
 */
export function createReadiness(prepared: RunPrepared, sunsets: () => PublicSunset[] = () => []): Readiness {
  let booted = false
  let stopping = false
  let ping: Promise<boolean> | undefined
  const databaseAnswers = () => (ping ??= withTimeout(prepared(PING, []), READY_QUERY_TIMEOUT_MS)
    .then(() => true, () => false)
    .finally(() => (ping = undefined)))
  return {
    markBooted: () => void (booted = true),
    markStopping: () => void (stopping = true),
    async check() {
      const up = booted && !stopping
      const database = up && await databaseAnswers()
      const checks = { booted: up, database }
      const warnings = sunsets()
      const details = warnings.length ? { warnings } : {}
      if (!up) return { ready: false, checks, failed: 'booted', ...details }
      return database ? { ready: true, checks, ...details } : { ready: false, checks, failed: 'database', ...details }
    },
  }
}
