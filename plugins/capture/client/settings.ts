import type { ClientSettings } from '../protocol.ts'

/** The per-site settings renderScript injects; host and cop_key come from the tag at runtime instead. */
export type Settings = Pick<ClientSettings, 'forms' | 'banner' | 'bannerText' | 'consentSource'>

/**
 * A free identifier the minifier keeps as is; renderScript (plugins/capture/script.ts) replaces it with the
 * settings' JSON. It must appear exactly once in the bundle: read it only here.
 */
declare const __DC_SETTINGS__: Settings

export function readSettings(): Settings {
  return __DC_SETTINGS__
}
