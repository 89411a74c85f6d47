import { describe, expect, it } from 'vitest'
import { asLateLead } from '../../core/delivery/late-lead.ts'
import { nextStep } from '../../core/delivery/retry.ts'
import { leadFixture } from '../contract/fixtures.ts'

// A platform whose vendor documents no event-age limit (Microsoft Advertising) declares no maxEventAgeDays: an old
// conversion is neither skipped nor cut short by a window; its retries end after the attempts allowed.
const DAY_MS = 86_400_000
const policy = { maxAttempts: 5, retryBaseMs: 1000, retryMaxMs: 60_000 }
const retry = { status: 'retry', message: 'HTTP 503' } as const

describe('a platform without an event-age window', () => {
  it('retries a 60-day-old conversion while attempts remain, and gives up after the last one', () => {
    const occurredAt = new Date(Date.now() - 60 * DAY_MS)
    expect(nextStep(retry, 1, occurredAt, undefined, policy)).toMatchObject({ status: 'retrying' })
    expect(nextStep(retry, 1, occurredAt, 7, policy)).toMatchObject({ status: 'failed', error: expect.stringContaining('7-day event window') })
    expect(nextStep(retry, 5, occurredAt, undefined, policy)).toMatchObject({ status: 'failed', error: 'HTTP 503 (gave up after 5 attempts)' })
  })

  it('sends a lead qualified late with its own time and no note', () => {
    const lead = { ...leadFixture(), occurredAt: new Date(Date.now() - 30 * DAY_MS) }
    const released = { state: 'released', resolved_at: new Date() }
    expect(asLateLead(lead, released, { name: 'microsoft_ads', label: 'Microsoft Advertising' })).toBeUndefined()
    expect(asLateLead(lead, released, { name: 'meta', label: 'Meta', maxEventAgeDays: 7 })?.event.occurredAt).toEqual(released.resolved_at)
  })
})
