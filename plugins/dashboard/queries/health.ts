/** The health view's figures: each destination's health (core/health/stats.ts) and the alerts that hold now. */
import type { RunPrepared } from '../../../core/db/prepared.ts'
import { readAlerts, type StoredAlert } from '../../../core/health/queries.ts'
import { destinationHealth, type DestinationHealth } from '../../../core/health/stats.ts'

export interface SiteHealth {
  destinations: DestinationHealth[]
  /** Alerts whose cause holds, as the alert job last saw them. */
  alerts: StoredAlert[]
}

export async function siteHealth(prepared: RunPrepared, siteId: string, platforms: readonly string[], windowMinutes: number): Promise<SiteHealth> {
  const [destinations, alerts] = await Promise.all([
    destinationHealth(prepared, siteId, platforms, windowMinutes),
    readAlerts(prepared, siteId),
  ])
  return { destinations, alerts: alerts.filter((alert) => alert.active) }
}
