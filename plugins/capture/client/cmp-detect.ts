/**
 * Whether the site's own consent tool is on the page, for the main script: reading it is cmp.ts, a chunk loaded only
 * when one is followed (GET /script/cmp), so a site without a consent tool does not pay for it.
 */
import type { CollectInput } from './hits.ts'

export type CmpConsent = NonNullable<CollectInput['cmp']>

/** An IAB TCF or GPP API, or a Consent Mode command in dataLayer. */
export function cmpPresent(): boolean {
  const w = window as any
  return !!(w.__tcfapi || w.__gpp || (w.dataLayer || []).some((entry: any) => entry && entry[0] == 'consent'))
}
