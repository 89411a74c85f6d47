/**
 * Trust tiers of a conversion's messageId. `trusted`: the private-key automation route and webhooks whose signature
 * was verified. `public`: the tracking script and unsigned webhook bodies, which anyone can send with any id. The
 * tiers have separate id spaces here: a public conversion cannot occupy the id of a trusted one in dcgate, and a
 * trusted copy arriving within the public grace supersedes it. The tiers stay internal: the platforms receive the
 * messageId as it is, so a tracked Purchase carries the order id the site's own pixel and tag send and the platform
 * deduplicates the two (docs/install-tracking.md). A forged id is then no worse than the site's own pixel fired by
 * hand, which anyone can do with any event id.
 */
export const TRUST_TIERS = ['trusted', 'public'] as const
export type Trust = typeof TRUST_TIERS[number]

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
