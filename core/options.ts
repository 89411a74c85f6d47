/**
 * The options object of an adapter (`sites[].destinations.meta`, `sites[].sources.shopify`, `sites[].crm.hubspot`):
 * unknown keys are refused, so a misspelt option (`testEventcode`, `secert`) stops boot instead of doing nothing.
 * One place for the messages, so every adapter answers a config mistake in the same words.
 */
import * as v from 'valibot'

/**
 * A strict object with the house messages: an unknown key is `unknown key (check its spelling)` (or `unknownKey`,
 * for a hint of the adapter's own), a missing required key `is required`, anything else not an object
 * `must be an object with <whatItIs>` (`must be an object` without it), e.g.
 * `strictOptions({ pixelId, accessToken }, 'pixelId and accessToken')`. The config's own sections use it too.
 */
export function strictOptions<const E extends v.ObjectEntries>(entries: E, whatItIs?: string, unknownKey = 'unknown key (check its spelling)') {
  return v.strictObject(entries, (issue) => {
    if (issue.expected === 'never') return unknownKey
    if (issue.expected?.startsWith('"')) return 'is required'
    return whatItIs ? `must be an object with ${whatItIs}` : 'must be an object'
  })
}
