/**
 * Delivery health alerts (issue 29, docs/delivery-health.md). One cluster job (one instance per run, under a lease:
 * core/jobs/scheduler.ts) looks at every site's destinations once a minute, finds the causes that hold
 * (./causes.ts), and moves each cause's stored state (./transitions.ts, table `delivery_alerts`): an alert when a cause
 * starts to hold, at most once an hour per site, destination and cause; a "recovered" message when it clears. Sent to
 * the site's members (or `sites[].alerts.email`) by mail and to `sites[].alerts.webhookUrl`.
 */
import type { JobHandle, ScheduledJob } from '../jobs/scheduler.ts'
import type { RunPrepared } from '../db/prepared.ts'
import type { Registry } from '../registry.ts'
import type { SiteDirectory, ActiveSite } from '../sites/directory.ts'
import type { Mailer } from '../mail/mailer.ts'
import { findSunsetWarnings } from '../api-sunsets.ts'
import { canonicalEmail } from '../identity/email.ts'
import { findCauses, type FoundCause } from './causes.ts'
import { notify } from './notify.ts'
import { readAlerts, saveAlert, type StoredAlert } from './queries.ts'
import { destinationHealth } from './stats.ts'
import { nextAlertState } from './transitions.ts'

export interface AlertDeps {
  prepared: RunPrepared
  registry: Registry
  sites: SiteDirectory
  mailer: () => Mailer
  /** The public base URL, for the dashboard link in messages. */
  baseUrl: string
  report: (error: unknown) => void
}

/** Once a minute (sooner with a short worker interval, as in tests). */
export function scheduleDeliveryAlerts(schedule: (job: ScheduledJob) => JobHandle, deps: AlertDeps, workerIntervalMs: number): JobHandle {
  return schedule({ name: 'health:alerts', everyMs: Math.min(60_000, 60 * workerIntervalMs), run: (signal) => evaluateAlerts(deps, signal) })
}

/** One round over every site; answers the messages sent. */
export async function evaluateAlerts(deps: AlertDeps, signal?: AbortSignal, now = new Date()): Promise<number> {
  let sent = 0
  for (const site of deps.sites.list()) {
    if (signal?.aborted) break
    try {
      sent += await evaluateSite(deps, site, now)
    }
    catch (error) {
      deps.report(error)
    }
  }
  return sent
}

async function evaluateSite(deps: AlertDeps, site: ActiveSite, now: Date): Promise<number> {
  const platforms = deps.registry.forSite(site.id, 'ad-platform').map((c) => c.definition.name)
  const stored = await readAlerts(deps.prepared, site.id)
  if (!platforms.length && !stored.length) return 0
  const thresholds = site.config.alerts
  const health = await destinationHealth(deps.prepared, site.id, platforms, thresholds.windowMinutes)
  const found = findCauses(health, findSunsetWarnings(deps.registry, [site.id], now), thresholds)
  const key = (c: { provider: string, cause: string }) => `${c.provider}\u0000${c.cause}`
  const holding = new Map(found.map((c) => [key(c), c]))
  const previous = new Map(stored.map((s) => [key(s), s]))
  let sent = 0
  for (const k of new Set([...holding.keys(), ...previous.keys()])) {
    const cause = holding.get(k)
    const before = previous.get(k)
    const { state, send } = nextAlertState(before, cause !== undefined, now)
    if (!state) continue
    const subject = (cause ?? before)! as FoundCause | StoredAlert
    const alert: StoredAlert = { ...state, provider: subject.provider, cause: subject.cause, detail: cause?.detail ?? before?.detail ?? null }
    if (send) {
      const outcome = await notify({
        kind: send, site: { id: site.id, name: site.name }, provider: alert.provider, cause: alert.cause, detail: alert.detail ?? '',
        since: send === 'alert' ? state.since : now, dashboardUrl: `${deps.baseUrl}/dashboard/sites/${encodeURIComponent(site.id)}/overview#health`,
      }, { mailer: deps.mailer(), recipients: recipientsOf(site), webhookUrl: site.config.alerts.webhookUrl, webhookSecret: site.config.alerts.webhookSecret })
      for (const error of outcome.errors) deps.report(error)
      // Nobody was reached although someone should have been: the state stays as it was, and the next round tries again.
      if (outcome.delivered === 0 && outcome.errors.length > 0) continue
      sent += outcome.delivered
    }
    if (!before || changed(before, alert)) await saveAlert(deps.prepared, site.id, alert)
  }
  return sent
}

/** `alerts.email`: true, the site's members; false, nobody; else the addresses listed. Each address once. */
export function recipientsOf(site: ActiveSite): string[] {
  const email = site.config.alerts.email
  const listed = email === true ? site.config.members : email === false ? [] : email
  return [...new Set(listed.map((address) => canonicalEmail(address)).filter((address): address is string => Boolean(address)))]
}

function changed(before: StoredAlert, after: StoredAlert): boolean {
  return before.active !== after.active || before.notified !== after.notified || before.detail !== after.detail
    || before.since.getTime() !== after.since.getTime() || before.alertedAt?.getTime() !== after.alertedAt?.getTime()
}
