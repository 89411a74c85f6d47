/**
 * Trust tiers of a conversion's messageId. `trusted`: the private-key automation route and webhooks whose signature
 * was verified. `public`: the tracking script and unsigned webhook bodies, which anyone can send with any id. The
 * tiers have separate id spaces: a public conversion cannot occupy the id of a trusted one, here or at a platform.
 */
export const TRUST_TIERS = ['trusted', 'public'] as const
export type Trust = typeof TRUST_TIERS[number]

/**
 * Put before a public conversion's messageId in what the platforms receive as their dedup key (Meta's `event_id`,
 * Google's `orderId`…): platforms drop a second event with an id they already have, so a page-chosen id sent as is
 * could still shadow the real order there. Trusted ids are sent as they are.
 */
export const PUBLIC_EVENT_ID_PREFIX = 'public:'

/** The id the platforms get for a stored conversion. */
export function platformEventId(messageId: string, trust: Trust): string {
  return trust === 'public' ? `${PUBLIC_EVENT_ID_PREFIX}${messageId}` : messageId
}

/**
 * Whether a conversion of tier `trust` repeats one already stored for its messageId: a public one repeats any
 * holder (the page's copy of an order the server already reported), a trusted one only a trusted holder.
 */
export function isRepeat(trust: Trust, holders: readonly string[]): boolean {
  return trust === 'public' ? holders.length > 0 : holders.includes('trusted')
}

/** The reason a public conversion's deliveries end skipped once a trusted one holds its messageId. */
export function supersededReason(source: string): string {
  return `superseded by ${/^[aeiou]/i.test(source) ? 'an' : 'a'} ${source} conversion with the same messageId`
}
