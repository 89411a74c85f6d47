/** Pieces the descriptors share when they turn picks into an adapter's options. */
import { STANDARD_EVENTS } from '../../../core/config/schema.ts'
import { PickProblem } from './errors.ts'
import type { Choice, ConnectApp, Picked } from './types.ts'

/** The picked value of a field that must be one of the listed choices. */
export function pickedOne(picked: Picked, name: string, choices: readonly Choice[] | undefined, what: string): string {
  const value = picked.get(name)?.trim()
  if (!value) throw new PickProblem(`Pick ${what}.`)
  if (choices && !choices.some((choice) => choice.value === value)) throw new PickProblem(`The ${what} picked is not one this account holds.`)
  return value
}

/** `{ Purchase: …, Lead: … }` from the per-event picks `<name>.<event>`; events left empty are left out. */
export function perEvent(picked: Picked, name: string, map: (value: string) => string | undefined = (value) => value): Record<string, string> {
  const out: Record<string, string> = {}
  for (const event of STANDARD_EVENTS) {
    const value = picked.get(`${name}.${event}`)?.trim()
    const mapped = value ? map(value) : undefined
    if (mapped) out[event] = mapped
  }
  return out
}

/** `baseUrl` from `oauth.<platform>.apiBaseUrl` when the config sets it (a proxy or a fake); else the adapter's default. */
export function baseUrlOption(app: ConnectApp): { baseUrl?: string } {
  return app.overrides.apiBaseUrl ? { baseUrl: app.overrides.apiBaseUrl.replace(/\/+$/, '') } : {}
}

/** A vendor's revoke endpoint beside an overridden token endpoint (`…/token` → `…/revoke`), so a fake serves both. */
export function besideToken(app: ConnectApp, fallback: string, from: RegExp, to: string): string {
  return app.overrides.tokenUrl ? app.overrides.tokenUrl.replace(from, to) : fallback
}

/** The site's events as choices (a CRM poller's eventName). */
export function eventChoices(events: readonly string[]): Choice[] {
  return events.map((key) => ({ value: key, label: key }))
}
