import { describe, expect, it } from 'vitest'
import { findCauses, MIN_DELIVERIES_FOR_RATE } from '../../core/health/causes.ts'
import { failureShare, type DestinationHealth } from '../../core/health/stats.ts'
import { nextAlertState, type AlertState } from '../../core/health/transitions.ts'
import type { SunsetWarning } from '../../core/api-sunsets.ts'

// The rules behind the alerts, without the clock: the once-an-hour rule per cause, and the failure-rate threshold.
const MINUTE = 60_000
const start = new Date()
const at = (minutes: number) => new Date(start.getTime() + minutes * MINUTE)

/** Feeds a cause's "holds" per evaluation (minutes from start) through the rule; answers what was sent when. */
function run(timeline: [minutes: number, holds: boolean][]): string[] {
  let state: AlertState | undefined
  const sent: string[] = []
  for (const [minutes, holds] of timeline) {
    const next = nextAlertState(state, holds, at(minutes))
    state = next.state
    if (next.send) sent.push(`${minutes}:${next.send}`)
  }
  return sent
}

describe('the once-an-hour rule', () => {
  it('alerts when a cause starts to hold, not again while it holds, and says "recovered" once when it clears', () => {
    expect(run([[0, false], [1, true], [2, true], [90, true], [200, true], [201, false], [202, false]])).toEqual(['1:alert', '201:recovered'])
  })

  it('a cause that comes back within the hour of its last alert waits for the hour, then alerts once if it still holds', () => {
    expect(run([[0, true], [10, false], [20, true], [40, true], [59, true], [60, true], [61, true], [120, true]]))
      .toEqual(['0:alert', '10:recovered', '60:alert'])
  })

  it('a cause that comes and goes within the hour is not announced again, and its clearing is silent', () => {
    expect(run([[0, true], [5, false], [15, true], [25, false], [35, true], [45, false]])).toEqual(['0:alert', '5:recovered'])
  })

  it('keeps when the episode began', () => {
    const first = nextAlertState(undefined, true, at(0)).state!
    const later = nextAlertState(first, true, at(30)).state!
    expect(later.since).toEqual(at(0))
    expect(nextAlertState(later, false, at(31)).state).toMatchObject({ active: false, notified: false, since: at(31) })
  })
})

const health = (sent: number, failed: number, credentialFailures = 0): DestinationHealth => ({
  provider: 'meta', sent, failed, credential_failures: credentialFailures, last_refusal_at: null, last_refusal_status: 400,
  last_refusal: 'Meta OAuthException 100 (HTTP 400): Invalid parameter', credentials_refused: false, state: 'failing', since: null,
})
const thresholds = { failureRate: 0.25, windowMinutes: 60 }

describe('the failure-rate threshold', () => {
  it('holds when more than the configured share of the window\'s ended deliveries failed', () => {
    expect(findCauses([health(6, 2)], [], thresholds)).toEqual([]) // 25%: not more than 25%
    const [cause] = findCauses([health(6, 3)], [], thresholds) // 33.3%
    expect(cause).toMatchObject({ provider: 'meta', cause: 'failure-rate' })
    expect(cause!.detail).toContain('33.3% of 9 deliveries to meta in the last 60 minutes failed (the alert threshold is 25%)')
    expect(findCauses([health(6, 3)], [], { failureRate: 0.5, windowMinutes: 60 })).toEqual([])
  })

  it('needs a few ended deliveries in the window before a share means anything', () => {
    expect(findCauses([health(0, MIN_DELIVERIES_FOR_RATE - 1)], [], thresholds)).toEqual([])
    expect(findCauses([health(0, MIN_DELIVERIES_FOR_RATE)], [], thresholds)).toHaveLength(1)
  })

  it('leaves refused credentials to their own cause, so one problem makes one alert', () => {
    expect(failureShare(health(1, 10, 10))).toBe(0)
    const causes = findCauses([{ ...health(0, 10, 10), credentials_refused: true }], [], thresholds)
    expect(causes.map((c) => c.cause)).toEqual(['credentials'])
  })

  it('names a pinned API version nearing its sunset as a cause of its own', () => {
    const sunset: SunsetWarning = { adapter: 'linkedin', version: '202508', sunset: at(60 * 24 * 30).toISOString().slice(0, 10), daysLeft: 30, source: 'https://learn.microsoft.com/linkedin/marketing/versioning', sites: ['shop'] }
    const [cause] = findCauses([], [sunset], thresholds)
    expect(cause).toMatchObject({ provider: 'linkedin', cause: 'sunset' })
    expect(cause!.detail).toContain('linkedin API version 202508 is retired by the vendor in 30 days')
  })
})
