import { randomUUID } from 'node:crypto'
import type { RunPrepared } from '../db/prepared.ts'
import type { ErrorContext } from '../hooks.ts'
import { claimJob, finishJob } from './queries.ts'

export interface ScheduledJob {
  /** Unique across the app, `plugin:job` (e.g. `release:expiry`); the lease row's key for cluster jobs. */
  name: string
  everyMs: number
  /**
   * `cluster` (default): one instance at a time, and once per `everyMs` across all instances (a lease row in
   * `job_leases`). `instance`: every instance runs it (work claimed row by row, or in this process's memory).
   */
  scope?: 'cluster' | 'instance'
  /** Run once as soon as the app is ready (default true); a cluster job then runs even if another instance ran it lately. */
  atStart?: boolean
  /** Aborted when the app closes, or when a cluster job's lease runs out. */
  run: (signal: AbortSignal) => unknown
}

export interface JobHandle {
  /** Runs the job now in this process (after a run in progress ends) and waits for it; a cluster job still needs its lease. */
  runNow: () => Promise<void>
}

export interface Scheduler {
  schedule: (job: ScheduledJob) => JobHandle
  /** Starts every job's timer (at `app:ready`), running `atStart` jobs once. */
  start: () => void
  /** Stops the timers, aborts and awaits runs in progress (at `app:close`). */
  stop: () => Promise<void>
}

/** How often a cluster job checks whether it is due: at most a minute late, one short statement per check. */
const MAX_CHECK_MS = 60_000

/** A cluster job's lease: long enough for a run, short enough that a crashed holder's job is soon taken over. */
function leaseMs(everyMs: number): number {
  return Math.min(Math.max(everyMs, 60_000), 600_000)
}

/**
 * Every periodic job of the app in one place, instead of a setInterval per plugin: timers are unref'd, a run never
 * overlaps itself, a failure is reported (never an unhandled rejection), and cluster jobs take a lease so that with
 * several instances one of them runs the job per interval.
 */
export function createScheduler(deps: { prepared: RunPrepared, report: (error: unknown, context: ErrorContext) => void }): Scheduler {
  const holder = randomUUID()
  const jobs: { job: ScheduledJob, tick: (force: boolean) => Promise<void> }[] = []
  const timers: NodeJS.Timeout[] = []
  const running = new Set<Promise<void>>()
  const closing = new AbortController()
  let started = false

  function schedule(job: ScheduledJob): JobHandle {
    if (jobs.some((j) => j.job.name === job.name)) throw new Error(`Two scheduled jobs are named "${job.name}"`)
    let current: Promise<void> | undefined
    const cluster = (job.scope ?? 'cluster') === 'cluster'
    const once = async (force: boolean) => {
      if (closing.signal.aborted) return
      const lease = leaseMs(job.everyMs)
      if (cluster && !await claimJob(deps.prepared, { name: job.name, holder, leaseMs: lease, everyMs: job.everyMs, force })) return
      const signal = cluster ? AbortSignal.any([closing.signal, AbortSignal.timeout(lease)]) : closing.signal
      let failure: unknown
      try {
        await job.run(signal)
      }
      catch (error) {
        failure = error
        deps.report(error, { source: `job:${job.name}` })
      }
      if (cluster) await finishJob(deps.prepared, { name: job.name, holder, error: failure })
    }
    const tick = (force: boolean): Promise<void> => {
      if (current) return current
      const run = once(force).catch((error: unknown) => deps.report(error, { source: `job:${job.name}` })).finally(() => {
        running.delete(run)
        current = undefined
      })
      running.add(run)
      current = run
      return run
    }
    jobs.push({ job, tick })
    if (started) begin(job, tick)
    return {
      async runNow() {
        await current
        await tick(true)
      },
    }
  }

  function begin(job: ScheduledJob, tick: (force: boolean) => Promise<void>): void {
    const cluster = (job.scope ?? 'cluster') === 'cluster'
    const timer = setInterval(() => void tick(false), cluster ? Math.min(job.everyMs, MAX_CHECK_MS) : job.everyMs)
    timer.unref()
    timers.push(timer)
    if (job.atStart ?? true) void tick(true)
  }

  return {
    schedule,
    start() {
      if (started) return
      started = true
      for (const { job, tick } of jobs) begin(job, tick)
    },
    async stop() {
      for (const timer of timers) clearInterval(timer)
      timers.length = 0
      closing.abort()
      await Promise.allSettled([...running])
    },
  }
}
