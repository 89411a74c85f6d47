/**
 * Whether the site's own consent tool is on the page, for the main script: reading it is cmp.ts, a chunk loaded only
 * when one is followed (GET /script/cmp), so a site without a consent tool does not pay for it.
 */
import type { CollectInput } from './hits.ts'

export type CmpConsent = NonNullable<CollectInput['cmp']>

/**
 * An IAB TCF or GPP API (here, or for a page in a frame, the top window's locator frame the IAB's stubs add), or a
 * Consent Mode command in dataLayer.
 */
export function cmpPresent(): boolean {
  const w = window as any
  return ['__tcfapi', '__gpp'].some((api) => w[api] || located(api)) || (w.dataLayer || []).some((entry: any) => entry && entry[0] == 'consent')
}

/** A cross-origin top window answers for its child frames' names and throws for any other name. */
function located(api: string): unknown {
  try {
    return (top as any)[api + 'Locator']
  } catch {}
}
