/** Option schemas shared by the sources (`sites[].sources.<name>` in the config). */
import * as v from 'valibot'

/** A shared secret; trimmed, because a pasted secret often carries a stray space or newline. */
export function secretSchema(what: string) {
  return v.pipe(
    v.string('must be a string'),
    v.trim(),
    v.minLength(16, `must be the ${what}, at least 16 characters`),
    v.maxLength(1024, 'must be at most 1024 characters'),
  )
}

/** The site's event key or standard event the conversions are recorded as. */
export const eventSchema = v.optional(
  v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(255, 'must be at most 255 characters')),
  'Purchase',
)
