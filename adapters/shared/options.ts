/** Option pieces the ad adapters write the same way. */
import * as v from 'valibot'

/**
 * One value per standard event (`events`, `conversionActions`…): `entry` says what a value is and whether it may be
 * left out; any other key is refused by name, so `purchase:` stops boot instead of sending nothing.
 */
export function perStandardEvent<const S extends v.GenericSchema>(entry: S, mapsTo: string) {
  return v.strictObject(
    { Purchase: entry, Lead: entry, CompleteRegistration: entry, Schedule: entry },
    (issue) => issue.expected === 'never' ? 'unknown key; the keys are Purchase, Lead, CompleteRegistration and Schedule' : `must map standard events to ${mapsTo}`,
  )
}

/** An absolute http(s) URL without a trailing slash: the vendor's API, a proxy, or a fake server (`baseUrl`). */
export function httpUrl(example: string) {
  const message = `must be an absolute http(s) URL such as ${example}`
  return v.pipe(v.string('must be a string'), v.trim(), v.regex(/^https?:\/\//i, message), v.url(message), v.transform((url: string) => url.replace(/\/+$/, '')))
}
