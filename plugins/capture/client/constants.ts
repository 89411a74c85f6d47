/**
 * Constants the script shares with the server. They are copied here rather than imported from ../protocol.ts
 * because a value import would pull valibot into the browser bundle; the type annotations below make
 * `npm run typecheck` fail if the copies ever drift from the protocol.
 */
import type { CLICK_ID_KEYS as ProtocolClickIdKeys, PROTOCOL_VERSION as ProtocolVersion, SCRIPT_TAG_ID as ProtocolScriptTagId } from '../protocol.ts'

export const PROTOCOL_VERSION: typeof ProtocolVersion = 1
export const SCRIPT_TAG_ID: typeof ProtocolScriptTagId = 'dcgate-script'
export const CLICK_ID_KEYS = ['gclid', 'gbraid', 'wbraid', 'fbc', 'fbp', 'ttclid', 'li_fat_id', 'msclkid', 'uetvid', 'ga', 'ga_session', 'rdt_cid', 'epik', 'twclid', 'ScCid', 'scid'] as const satisfies typeof ProtocolClickIdKeys
export type ClickIdKey = typeof CLICK_ID_KEYS[number]

/** First-party storage keys (localStorage, with a cookie of the same name as fallback); the trailing `_` lets the build mangle the member names. */
export const KEYS = {
  /** Visitor id; always mirrored to a cookie as well. */
  visitor_: 'dc_vid',
  /** `<sid>.<ms of the last hit>` */
  session_: 'dc_sid',
  /** JSON of the click ids kept for the visitor. */
  clickIds_: 'dc_cids',
  /** 'granted' | 'denied' (the visitor's or the site CMP's choice) | 'not-required' (the server said so). */
  consent_: 'dc_consent',
} as const
