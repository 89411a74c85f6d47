import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import { definePlugin, type PluginContext } from '../../core/plugin.ts'
import { createScheduler, type Scheduler } from '../../core/jobs/scheduler.ts'
import type { ErrorContext } from '../../core/hooks.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

/** Resolves when `until` holds, checking every 10 ms; fails after `ms`. */
async function waitFor(until: () => boolean, ms = 5000): Promise<void> {
  const started = Date.now()
  while (!until()) {
    if (Date.now() - started > ms) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

function deferred(): { promise: Promise<void>, resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

describe('scheduled jobs (ctx.schedule)', () => {
  let app: TestApp
  let ctx: PluginContext
  const reported: { error: unknown, context: ErrorContext }[] = []
  // Two schedulers on one database stand for two instances: each has its own holder id.
  const instances: Scheduler[] = []
  const instance = () => {
    const scheduler = createScheduler({ prepared: ctx.prepared, report: (error, context) => void reported.push({ error, context }) })
    instances.push(scheduler)
    return scheduler
  }
  const leaseRow = async (name: string) => (await ctx.prepared<{ holder: string, last_error: string | null }>(
    { name: 'test_job_lease', text: 'select holder, last_error from job_leases where name = $1' }, [name],
  ))[0]

  beforeAll(async () => {
    const capture = definePlugin({ name: 'grab-context', setup: (given) => void (ctx = given) })
    app = await bootTestApp({ plugins: [capture] })
  })
  afterAll(async () => {
    await Promise.all(instances.map((s) => s.stop()))
    await app?.close()
  })

  it('a cluster job runs once per interval across instances, not once per instance', async () => {
    let runs = 0
    const everyMs = 250
    const started = Date.now()
    for (const scheduler of [instance(), instance(), instance()]) {
      scheduler.schedule({ name: 'test:cadence', everyMs, atStart: false, run: () => void runs++ })
      scheduler.start()
    }
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const elapsed = Date.now() - started
    // Three instances checking every 250 ms would run it about 24 times; the lease and the shared due time allow one per interval.
    expect(runs).toBeGreaterThanOrEqual(2)
    expect(runs).toBeLessThanOrEqual(Math.ceil(elapsed / everyMs) + 1)
  })

  it('while one instance runs a cluster job, another does not, even when asked to run it now', async () => {
    const first = instance()
    const second = instance()
    const gate = deferred()
    let firstRuns = 0
    let secondRuns = 0
    first.schedule({ name: 'test:lease', everyMs: 60_000, run: async () => { firstRuns++; await gate.promise } })
    const other = second.schedule({ name: 'test:lease', everyMs: 60_000, atStart: false, run: () => void secondRuns++ })
    first.start()
    await waitFor(() => firstRuns === 1)
    await other.runNow()
    expect(secondRuns).toBe(0)
    gate.resolve()
    // Stopping waits for the run, which gives the turn back.
    await first.stop()
    await other.runNow()
    expect(secondRuns).toBe(1)
  })

  it('reports a failing run with the job name, stores only its class, and runs it again next time', async () => {
    let runs = 0
    const scheduler = instance()
    const handle = scheduler.schedule({
      name: 'test:failing', everyMs: 60_000, atStart: false,
      run: () => {
        runs++
        throw new TypeError('customer ada@example.com broke it')
      },
    })
    await handle.runNow()
    await handle.runNow()
    expect(runs).toBe(2)
    const failures = reported.filter((r) => r.context.source === 'job:test:failing')
    expect(failures).toHaveLength(2)
    expect((failures[0]!.error as Error).message).toContain('broke it')
    expect((await leaseRow('test:failing'))?.last_error).toBe('TypeError')
  })

  it('an instance job runs on every instance, at start unless told otherwise', async () => {
    const counts = [0, 0]
    const pair = [instance(), instance()]
    pair.forEach((scheduler, i) => {
      scheduler.schedule({ name: 'test:everywhere', everyMs: 60_000, scope: 'instance', run: () => void counts[i]!++ })
      scheduler.start()
    })
    await waitFor(() => counts[0] === 1 && counts[1] === 1)
    expect(await leaseRow('test:everywhere')).toBeUndefined()
  })

  it('stop aborts the run in progress and waits for it', async () => {
    const scheduler = instance()
    let aborted = false
    let finished = false
    scheduler.schedule({
      name: 'test:long', everyMs: 60_000, scope: 'instance',
      run: async (signal) => {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()))
        aborted = signal.aborted
        await new Promise((resolve) => setTimeout(resolve, 50))
        finished = true
      },
    })
    scheduler.start()
    await new Promise((resolve) => setTimeout(resolve, 50))
    await scheduler.stop()
    expect(aborted).toBe(true)
    expect(finished).toBe(true)
  })

  it('refuses two jobs with one name', () => {
    const scheduler = instance()
    scheduler.schedule({ name: 'test:twice', everyMs: 1000, run: () => {} })
    expect(() => scheduler.schedule({ name: 'test:twice', everyMs: 1000, run: () => {} })).toThrow('Two scheduled jobs are named "test:twice"')
  })
})

describe('ctx.report', () => {
  it('logs and reaches the error hook; an error listener that throws makes no unhandled rejection', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => void unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    const seen: string[] = []
    const plugin = definePlugin({
      name: 'reporter',
      options: v.object({}),
      setup({ hooks, report }) {
        hooks.hook('error', (_error, context) => void seen.push(context.source))
        hooks.hook('error', () => { throw new Error('the error tracker is down') })
        hooks.hook('app:ready', () => report(new Error('background work failed'), { source: 'reporter:job' }))
      },
    })
    const app = await bootTestApp({ plugins: [plugin] })
    try {
      await waitFor(() => seen.length > 0)
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(seen).toEqual(['reporter:job'])
      expect(unhandled).toEqual([])
    }
    finally {
      process.off('unhandledRejection', onUnhandled)
      await app.close()
    }
  })
})
