import type { ClientSettings } from '../protocol.ts'

/**
 * What renderScript injects into the main script: the banner rule, whose consent to follow, and whether the site maps
 * forms at all (`forms: 1`; the selectors come with the forms chunk). Host and cop_key come from the tag at runtime.
 */
export interface Settings extends Pick<ClientSettings, 'banner' | 'consentSource'> { forms?: 1 }
/** What renderChunk injects into the chunks that carry a site's data: the banner's words, the mapped forms. */
export type BannerSettings = Pick<ClientSettings, 'bannerText'>
export type FormsSettings = Pick<ClientSettings, 'forms'>

/**
 * A free identifier the minifier keeps as is; plugins/capture/script.ts replaces it with the settings' JSON. It must
 * appear at most once in a bundle: read it only here.
 */
declare const __DC_SETTINGS__: unknown

export function readSettings<T extends Settings | BannerSettings | FormsSettings>(): T {
  return __DC_SETTINGS__ as T
}
