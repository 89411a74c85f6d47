/** The alert state (table `delivery_alerts`, ./entity.ts): read per site, written one cause at a time by the alert job. */
import type { PreparedStatement, RunPrepared } from '../db/prepared.ts'
import type { AlertCause } from './causes.ts'
import type { AlertState } from './transitions.ts'

export interface StoredAlert extends AlertState {
  provider: string
  cause: AlertCause
  detail: string | null
}

interface AlertRow { provider: string, cause: AlertCause, active: boolean, notified: boolean, since: Date | string, alerted_at: Date | string | null, detail: string | null }

/** $1 site. */
const READ_ALERTS: PreparedStatement = {
  name: 'dcgate_read_delivery_alerts_v1',
  text: `select provider, cause, active, notified, since, alerted_at, detail from delivery_alerts where site_id = $1 order by provider, cause`,
}

export async function readAlerts(prepared: RunPrepared, siteId: string): Promise<StoredAlert[]> {
  const rows = await prepared<AlertRow>(READ_ALERTS, [siteId])
  return rows.map((row) => ({
    provider: row.provider, cause: row.cause, active: row.active, notified: row.notified, detail: row.detail,
    since: new Date(row.since), alertedAt: row.alerted_at === null ? null : new Date(row.alerted_at),
  }))
}

/** $1 site, $2 platform, $3 cause, $4 active, $5 notified, $6 since, $7 alerted at, $8 detail. */
const SAVE_ALERT: PreparedStatement = {
  name: 'dcgate_save_delivery_alert_v1',
  text: `insert into delivery_alerts (site_id, provider, cause, active, notified, since, alerted_at, detail, updated_at)
    values ($1, $2, $3, $4, $5, $6, $7, $8, now())
    on conflict (site_id, provider, cause) do update set active = excluded.active, notified = excluded.notified, since = excluded.since,
      alerted_at = excluded.alerted_at, detail = excluded.detail, updated_at = now()`,
}

export async function saveAlert(prepared: RunPrepared, siteId: string, alert: StoredAlert): Promise<void> {
  await prepared(SAVE_ALERT, [
    siteId, alert.provider, alert.cause, alert.active, alert.notified, alert.since.toISOString(), alert.alertedAt?.toISOString() ?? null, alert.detail,
  ])
}
