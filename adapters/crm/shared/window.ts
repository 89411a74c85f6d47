/**
 * The polling window every CRM poller shares. The cursor is the newest modification time seen (ISO 8601, the CRM's
 * clock). Each poll asks for records modified since `cursor − overlap`, because a CRM's search index lags and clocks
 * skew: a record may surface a little after a later one was seen. The overlap means a poll can return a lead an
 * earlier poll returned; releases are idempotent, so that is harmless. Without a cursor (first poll, or a cursor
 * that does not parse) the window starts `initialLookbackDays` before now.
 */
import { normalizeEmail } from '../../../core/identity/normalize.ts'
import type { QualifiedLead } from '../../../core/registry.ts'

export interface WindowOptions {
  overlapMinutes: number
  initialLookbackDays: number
}

export interface PollWindow {
  /** Ask for records modified at or after this instant. */
  since: Date
  /** The watermark the poll started from; the returned cursor never goes below it. */
  start: Date
}

export function openWindow(cursor: string | undefined, options: WindowOptions, now: Date): PollWindow {
  const watermark = parseInstant(cursor)
  if (watermark) return { since: new Date(watermark.getTime() - options.overlapMinutes * 60_000), start: watermark }
  const start = new Date(now.getTime() - options.initialLookbackDays * 86_400_000)
  return { since: start, start }
}

/** The next cursor: the newest modification time seen, never older than where the window started. */
export function closeWindow(window: PollWindow, newestSeen: Date | undefined): string {
  const end = newestSeen && newestSeen > window.start ? newestSeen : window.start
  return end.toISOString()
}

/** Collects qualified emails (normalised, each once) and the newest modification time seen. */
export class Harvest {
  readonly #emails = new Set<string>()
  newest: Date | undefined

  /** Records every record the query returned, qualified or not, so the cursor passes them. */
  seen(modifiedAt: Date | undefined): void {
    if (modifiedAt && (!this.newest || modifiedAt > this.newest)) this.newest = modifiedAt
  }

  /** Adds the email when it is one (a blank or malformed email is skipped: it could never match a held conversion). */
  add(email: unknown): void {
    const normalized = normalizeEmail(email)
    if (normalized) this.#emails.add(normalized)
  }

  leads(eventName: string): QualifiedLead[] {
    return [...this.#emails].map((email) => ({ email, eventName }))
  }
}

/**
 * An instant from a CRM or a cursor: ISO 8601 with `Z`, `+hh:mm` or Salesforce's `+hhmm`, Pipedrive v1's
 * `YYYY-MM-DD HH:MM:SS` (UTC), or epoch milliseconds as text. Undefined for anything else.
 */
export function parseInstant(value: unknown): Date | undefined {
  if (typeof value !== 'string' || !value.trim()) return undefined
  const text = value.trim()
  if (/^\d{10,16}$/.test(text)) return validDate(new Date(Number(text)))
  const iso = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(text) ? `${text.replace(' ', 'T')}Z` : text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2')
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(iso)) return undefined
  return validDate(new Date(iso))
}

function validDate(date: Date): Date | undefined {
  return Number.isNaN(date.getTime()) ? undefined : date
}
