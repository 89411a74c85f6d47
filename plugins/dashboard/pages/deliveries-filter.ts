/** The Deliveries page's filter: read from the GET form (and the Retry forms' copies of it), checked, written back. */
import type { DeliveryFilter } from '../queries/deliveries.ts'

export const STATUSES = ['pending', 'retrying', 'sent', 'failed', 'skipped'] as const

/** The form's fields as they stand (dates as YYYY-MM-DD), for the inputs and for links that keep the filter. */
export interface FilterFields { platform: string, status: string, event: string, from: string, to: string }

const FIELDS = ['platform', 'status', 'event', 'from', 'to'] as const
const DATE = /^\d{4}-\d{2}-\d{2}$/

/** The filter, or what is wrong with the form (shown on the page with a 400). */
export function readFilter(params: URLSearchParams): { fields: FilterFields, filter: DeliveryFilter } | { fields: FilterFields, problem: string } {
  const fields = Object.fromEntries(FIELDS.map((name) => [name, (params.get(name) ?? '').trim()])) as unknown as FilterFields
  if (fields.platform && !/^[a-z0-9_]{1,32}$/.test(fields.platform)) return { fields, problem: 'Platform: not a platform name' }
  if (fields.status && !(STATUSES as readonly string[]).includes(fields.status)) return { fields, problem: `Status: one of ${STATUSES.join(', ')}` }
  if (fields.event.length > 255) return { fields, problem: 'Event: at most 255 characters' }
  const from = dayStart(fields.from)
  const toDay = dayStart(fields.to)
  if (from === null) return { fields, problem: 'From: a date (YYYY-MM-DD)' }
  if (toDay === null) return { fields, problem: 'To: a date (YYYY-MM-DD)' }
  // "To" includes its whole day: deliveries created before the next midnight (UTC).
  const to = toDay && new Date(Date.parse(toDay) + 86_400_000).toISOString()
  return {
    fields,
    filter: {
      ...(fields.platform ? { provider: fields.platform } : {}),
      ...(fields.status ? { status: fields.status } : {}),
      ...(fields.event ? { event: fields.event } : {}),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
    },
  }
}

/** Midnight UTC of a YYYY-MM-DD day as ISO; '' for none; null when it is not a real date. */
function dayStart(text: string): string | '' | null {
  if (!text) return ''
  if (!DATE.test(text)) return null
  const date = new Date(`${text}T00:00:00Z`)
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== text ? null : date.toISOString()
}

/** The non-empty fields as a query string (to keep the filter across pages, details and actions). */
export function filterQuery(fields: FilterFields, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams()
  for (const name of FIELDS) if (fields[name]) params.set(name, fields[name])
  for (const [name, value] of Object.entries(extra)) params.set(name, value)
  return params.toString()
}
