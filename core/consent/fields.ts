/**
 * The consent fields a page's `cmp` and a server conversion's `context.consent` carry, as valibot schemas. Apart from
 * read.ts, which decodes them, so the tracking script's types (plugins/capture/protocol.ts) reach no decoder library.
 */
import * as v from 'valibot'
import { MAX_AC_STRING } from './ac.ts'
import { CONSENT_SOURCES } from './purposes.ts'

/** Longest TC string accepted: a full vendor list with publisher restrictions stays far below it. */
export const MAX_TC_STRING = 8192
/** Longest GPP string accepted. */
export const MAX_GPP_STRING = 8192

const Signal = v.picklist(['granted', 'denied'], 'must be "granted" or "denied"')

/** The consent fields a conversion's `context.consent` and the script's `cmp` share. */
export const ConsentFields = {
  /** A TCF v2 TC string (`__tcfapi` tcData.tcString). */
  tcString: v.optional(v.pipe(v.string('must be a string'), v.trim(), v.maxLength(MAX_TC_STRING))),
  /** A GPP string (`__gpp` pingData.gppString). */
  gppString: v.optional(v.pipe(v.string('must be a string'), v.trim(), v.maxLength(MAX_GPP_STRING))),
  /** Google's Additional Consent string (`__tcfapi` tcData.addtlConsent), read alongside a TC string. */
  addtlConsent: v.optional(v.pipe(v.string('must be a string'), v.trim(), v.maxLength(MAX_AC_STRING))),
  ad_storage: v.optional(Signal),
  analytics_storage: v.optional(Signal),
  ad_user_data: v.optional(Signal),
  ad_personalization: v.optional(Signal),
}

/** What the script sends of the page's consent tool (the /collect body's `cmp`). */
export const ClientConsent = v.object({
  source: v.picklist(CONSENT_SOURCES),
  ...ConsentFields,
  /** The consent tool's purposes the script read (Consent Mode's analytics_storage is measurement). */
  measurement: v.optional(Signal),
  advertising: v.optional(Signal),
})
export type ClientConsent = v.InferOutput<typeof ClientConsent>
