/**
 * The once-an-hour rule, pure: from a cause's stored state and whether it holds now, the next state and what to send.
 * An alert goes out when a cause starts to hold, unless one for the same site, destination and cause went out less
 * than an hour ago (then it goes out once the hour has passed, if the cause still holds). A "recovered" message goes
 * out when a cause whose alert was sent clears; a cause that cleared before its alert went out clears silently.
 */
export const ALERT_INTERVAL_MS = 3_600_000

export interface AlertState {
  active: boolean
  /** The current episode's alert was sent. */
  notified: boolean
  since: Date
  alertedAt: Date | null
}

export type Send = 'alert' | 'recovered' | undefined

export function nextAlertState(previous: AlertState | undefined, holds: boolean, now: Date): { state: AlertState | undefined, send: Send } {
  if (!holds) {
    if (!previous?.active) return { state: previous, send: undefined }
    return { state: { active: false, notified: false, since: now, alertedAt: previous.alertedAt }, send: previous.notified ? 'recovered' : undefined }
  }
  const episode = previous?.active ? previous : { active: true, notified: false, since: now, alertedAt: previous?.alertedAt ?? null }
  if (episode.notified) return { state: episode, send: undefined }
  const quiet = episode.alertedAt !== null && now.getTime() - episode.alertedAt.getTime() < ALERT_INTERVAL_MS
  if (quiet) return { state: episode, send: undefined }
  return { state: { ...episode, notified: true, alertedAt: now }, send: 'alert' }
}
