/** Option pieces every CRM poller takes the same way (valibot), so the three READMEs can describe them once each. */
import * as v from 'valibot'

export const NonEmpty = v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'))

/** The site's event key (sites[].events[].key, release: when_qualified) the qualified leads release. */
export const EventName = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.regex(/^[A-Za-z0-9_.:-]+$/, 'must be the key of a site event with release: when_qualified (letters, digits, _ . : and -)'),
)

/** How far before the cursor each poll reaches back (search index lag, clock skew). */
export const OverlapMinutes = v.optional(v.pipe(v.number('must be a number of minutes'), v.integer('must be a whole number of minutes'), v.minValue(1, 'must be at least 1 minute'), v.maxValue(60, 'must be at most 60 minutes')), 15)

/** How far back the first poll (no cursor yet) looks. */
export const InitialLookbackDays = v.optional(v.pipe(v.number('must be a number of days'), v.integer('must be a whole number of days'), v.minValue(1, 'must be at least 1 day'), v.maxValue(365, 'must be at most 365 days')), 30)

/** An absolute http(s) URL without a trailing slash: the CRM's API, a proxy, or a fake server. */
export { httpUrl } from '../../shared/options.ts'

export function pageSize(min: number, max: number, fallback: number) {
  return v.optional(v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.minValue(min, `must be at least ${min}`), v.maxValue(max, `must be at most ${max}`)), fallback)
}
