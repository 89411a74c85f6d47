/**
 * Keeping the visitor's click ids, for the ids chunk (loaded once identifiers are allowed): the ids stored earlier,
 * merged with each view's query string and the ad tags' cookies, stored again while allowed. The main script hands
 * it the query strings of the views it saw before (with their times), so a landing URL's click is never lost.
 */
import { extractClickIds, formatClickIds, parseClickIds, stampClickIds, withMetaCookies, withTagCookies, type ClickIds } from './click-ids.ts'
import { CLICK_ID_KEYS, KEYS } from './constants.ts'
import { get, set } from './storage.ts'

/** Merges one view's query string (seen at `at`); stores the ids (and makes an fbp) only when `allowed`. */
export type KeepClickIds = (search: string, at: number, allowed: boolean) => ClickIds

export function clickIdKeeper(): KeepClickIds {
  let kept = parseClickIds(get(KEYS.clickIds_), CLICK_ID_KEYS, Date.now())
  return (search, at, allowed) => {
    const fromUrl = extractClickIds(search, at, kept.ids)
    kept = stampClickIds(kept, withTagCookies(withMetaCookies(fromUrl, document.cookie, at, allowed), document.cookie), at)
    if (allowed && Object.keys(kept.ids).length) set(KEYS.clickIds_, formatClickIds(kept))
    return kept.ids
  }
}
