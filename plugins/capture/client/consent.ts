/**
 * The consent rule. Pure: no DOM.
 *
 * - banner 'off': never ask; identifiers are sent unless the site's CMP said `dcutils.consent('denied')`.
 * - banner 'always': ask everyone; identifiers only after 'granted'.
 * - banner 'eu': the server's first /collect answer (`consent.required`, from the IP's country) decides. Until it
 *   answers, hits go without identifiers. A 'not-required' answer is remembered first-party.
 * A stored choice ('granted' / 'denied') always wins and skips the banner.
 *
 * When the site's own consent tool is followed (cmp.ts), dcgate's banner never shows, nothing is stored as a choice,
 * and identifiers wait for the tool's answer on every page: its measurement purpose is the choice.
 */
export type Banner = 'eu' | 'always' | 'off'
export type Choice = 'granted' | 'denied'

export interface ConsentState {
  banner: Banner
  choice?: Choice
  /** Whether this visitor must be asked; undefined while an 'eu' site waits for the server. */
  required?: boolean
  /** The site's consent tool (TCF, Consent Mode, GPP) is followed, or `dcutils.consent` alone ('manual'). */
  cmp?: boolean
}

/** The state on page load from the site's banner setting and what storage holds under the consent key. */
export function initialConsent(banner: Banner, stored: string | undefined, cmp = false): ConsentState {
  if (cmp) return { banner, required: true, cmp }
  const state: ConsentState = { banner, required: banner === 'off' ? false : banner === 'always' ? true : stored === 'not-required' ? false : undefined }
  if (stored === 'granted' || stored === 'denied') state.choice = stored
  return state
}

/** Whether identifiers may be stored and sent. */
export function allowed(state: ConsentState): boolean {
  return state.choice ? state.choice === 'granted' : state.required === false
}

/** Whether the built-in banner should be on screen. */
export function needsBanner(state: ConsentState): boolean {
  return !state.choice && !state.cmp && state.required === true && state.banner !== 'off'
}
