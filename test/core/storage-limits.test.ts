import { describe, expect, it } from 'vitest'
import { createDcgateStorage } from '../../core/storage.ts'
import { IP_LIMIT, overIpLimit } from '../../plugins/dsar/rate-limit.ts'

// In memory, rate-limit counters have a mount of their own: a flood of cache traffic (key verdicts, email lookups
// for attacker-chosen domains) cannot evict them and reopen a limit, and they still expire with their window.
const memory = () => createDcgateStorage({ connectTimeoutMs: 1000, commandTimeoutMs: 1000 })

describe('rate-limit counters in memory', () => {
  it('survive a flood of cache entries larger than the cache', async () => {
    const storage = memory()
    for (let i = 0; i < IP_LIMIT; i++) expect(await overIpLimit(storage, '198.51.100.7')).toBeUndefined()
    expect(await overIpLimit(storage, '198.51.100.7')).toBeGreaterThan(0)
    for (let i = 0; i < 120_000; i++) await storage.setItem(`cache:email-risk:rdap:flood-${i}.example`, { value: i, expiresAt: 0 })
    expect(await storage.hasItem('cache:email-risk:rdap:flood-0.example')).toBe(false) // the cache did evict
    expect(await overIpLimit(storage, '198.51.100.7')).toBeGreaterThan(0) // the limit did not reopen
  })

  it('expire with the ttl they were written with', async () => {
    const storage = memory()
    await storage.setItem('limits:test:subject', { count: 3 }, { ttl: 1 })
    expect(await storage.getItem('limits:test:subject')).toEqual({ count: 3 })
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect(await storage.getItem('limits:test:subject')).toBeNull()
  })
})
