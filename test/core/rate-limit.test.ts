import type { Storage } from 'unstorage'
import { afterAll, describe, expect, it } from 'vitest'
import { createMemoryCounters } from '../../core/limit-counters.ts'
import { overLimit } from '../../core/http/rate-limit.ts'
import { createDcgateStorage } from '../../core/storage.ts'

// A limit holds under concurrency: parallel attempts are counted one by one (an INCR in Redis, one synchronous step
// in memory), where a read then a write let 30 parallel sign-in link requests send 8 mails against a limit of 3.
const options = { connectTimeoutMs: 1000, commandTimeoutMs: 1000 }
const stores: [string, Storage][] = [['memory', createDcgateStorage(options)]]
if (process.env.REDIS_URL) stores.push(['Redis', createDcgateStorage({ ...options, url: process.env.REDIS_URL })])
afterAll(() => Promise.all(stores.map(([, storage]) => storage.dispose())))
const unique = () => Math.random().toString(36).slice(2)

describe.each(stores)('rate limits in %s', (_, storage) => {
  it('let exactly the limit through when 30 attempts come at once', async () => {
    const key = `test:parallel-${unique()}`
    const answers = await Promise.all(Array.from({ length: 30 }, () => overLimit(storage, key, 3, 60)))
    expect(answers.filter((wait) => wait === undefined)).toHaveLength(3)
    for (const wait of answers.filter(Boolean)) expect(wait).toBeGreaterThan(55)
  })

  it('reopen when the window ends', async () => {
    const key = `test:window-${unique()}`
    expect(await overLimit(storage, key, 1, 1)).toBeUndefined()
    expect(await overLimit(storage, key, 1, 1)).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect(await overLimit(storage, key, 1, 1)).toBeUndefined()
  })
})

describe('rate-limit counters in memory', () => {
  it('are never evicted while their window is live: a flood of new subjects is refused instead', () => {
    const counters = createMemoryCounters(100)
    const now = Date.now()
    counters.count('sign-in:attacker', 60_000, now)
    for (let i = 0; i < 1000; i++) counters.count(`sign-in:flood-${i}`, 60_000, now)
    expect(counters.count('sign-in:attacker', 60_000, now).count).toBe(2)
    expect(counters.count('sign-in:newcomer', 60_000, now).count).toBe(Number.POSITIVE_INFINITY)
    // Another limiter is untouched by the flood, and expired windows make room again.
    expect(counters.count('dsar:someone', 60_000, now).count).toBe(1)
    expect(counters.count('sign-in:newcomer', 60_000, now + 61_000).count).toBe(1)
  })
})
