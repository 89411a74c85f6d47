/**
 * Why a destination deserves an alert, from its health (./stats.ts) and the vendors' sunsets (core/api-sunsets.ts).
 * Pure: the alert job (./alerts.ts) decides from these what to send.
 */
import { describeSunset, type SunsetWarning } from '../api-sunsets.ts'
import { failureShare, type DestinationHealth } from './stats.ts'

export const ALERT_CAUSES = ['failure-rate', 'credentials', 'sunset'] as const
export type AlertCause = typeof ALERT_CAUSES[number]

/** Fewer ended deliveries than this in the window say nothing about a rate (one failure of two wakes nobody). */
export const MIN_DELIVERIES_FOR_RATE = 5

export interface FoundCause {
  provider: string
  cause: AlertCause
  /** In words, for the message: what was found. */
  detail: string
}

export interface AlertThresholds {
  failureRate: number
  windowMinutes: number
}

/** The causes that hold now, per destination. */
export function findCauses(health: readonly DestinationHealth[], sunsets: readonly SunsetWarning[], thresholds: AlertThresholds): FoundCause[] {
  const found: FoundCause[] = []
  for (const destination of health) {
    if (destination.credentials_refused) {
      found.push({
        provider: destination.provider, cause: 'credentials',
        detail: `${destination.provider} refused dcgate's credentials: ${destination.last_refusal ?? 'no message'}`,
      })
    }
    const share = failureShare(destination)
    const ended = destination.sent + destination.failed - destination.credential_failures
    if (ended >= MIN_DELIVERIES_FOR_RATE && share > thresholds.failureRate) {
      found.push({
        provider: destination.provider, cause: 'failure-rate',
        detail: `${percent(share)} of ${ended} deliveries to ${destination.provider} in the last ${thresholds.windowMinutes} minutes failed `
          + `(the alert threshold is ${percent(thresholds.failureRate)}). Last refusal: ${destination.last_refusal ?? 'none ended yet, deliveries are being retried'}`,
      })
    }
  }
  for (const warning of sunsets) found.push({ provider: warning.adapter, cause: 'sunset', detail: describeSunset(warning) })
  return found
}

export function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`
}

export function describeCause(cause: AlertCause): string {
  return cause === 'credentials' ? 'credentials refused' : cause === 'failure-rate' ? 'too many failures' : 'API version sunset'
}
