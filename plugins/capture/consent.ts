import type { ActiveSite } from '../../core/sites/directory.ts'
import type { VisitIntel } from './intel/types.ts'

/** Whether this visitor must be asked before anything personal is kept: the site's banner setting, then the IP's country. */
export function consentRequired(site: ActiveSite, country: string | undefined, intel: VisitIntel): boolean {
  const banner = site.config.consent.banner
  if (banner === 'always') return true
  if (banner === 'off') return false
  return intel.requiresConsent(country)
}

/**
 * Whether identifiers may be kept: not when the visitor said no (also on sites without a banner, whose own CMP
 * passes the answer through dcutils.consent), and not while an answer is required and missing.
 */
export function personalAllowed(required: boolean, consent: 'granted' | 'denied' | 'unknown'): boolean {
  if (consent === 'denied') return false
  return !required || consent === 'granted'
}
