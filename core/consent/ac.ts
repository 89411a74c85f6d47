/**
 * Google's Additional Consent string (the `addtlConsent` of `__tcfapi` tcData, passed down the ad chain as
 * `addtl_consent`): the Google ad tech providers (ATPs) that are not on the IAB's Global Vendor List, with the
 * visitor's consent for each. Read alongside a TC string only, as Google's specification intends.
 * Spec: https://support.google.com/admanager/answer/9681920 (read 2026-11-28). Version 2 is
 * `2~<consented ids>~dv.<disclosed ids>` (the disclosed part may be `dv.` or `dv` when empty); version 1,
 * `1~<consented ids>`, is still accepted. Ids are dot-separated decimal numbers.
 */

/** Longest AC string accepted: Google's whole provider list written out stays far below it. */
export const MAX_AC_STRING = 8192

/**
 * dcgate platforms by their Google ATP id, for platforms that are ATPs but not GVL vendors. Ids from Google's
 * provider list, https://storage.googleapis.com/tcfac/additional-consent-providers.csv (docs/privacy.md).
 */
export const ATP_IDS: Readonly<Record<string, number>> = {
  // "Facebook", ATP 89.
  meta: 89,
  // "Snap Inc.", ATP 2572.
  snapchat: 2572,
}

export class AcStringError extends Error {}

export interface AdditionalConsent {
  version: 1 | 2
  consented: ReadonlySet<number>
  /** Providers shown to the visitor without consent (version 2 only). */
  disclosed: ReadonlySet<number>
}

const IDS = /^(?:\d{1,9}(?:\.\d{1,9})*)?$/
const ids = (list: string): Set<number> => new Set(list ? list.split('.').map(Number) : [])

/** Parses an AC string; throws AcStringError saying what is wrong. */
export function parseAcString(text: string): AdditionalConsent {
  const parts = text.split('~')
  const [version, consented = '', disclosed] = parts
  if (version !== '1' && version !== '2') throw new AcStringError('must start with Google\'s Additional Consent version 1 or 2 ("2~…~dv.…")')
  if (parts.length !== (version === '1' ? 2 : 3)) throw new AcStringError(`version ${version} has ${version === '1' ? 'two' : 'three'} parts separated by "~"`)
  if (!IDS.test(consented)) throw new AcStringError('consented providers must be decimal ids separated by single dots')
  if (version === '1') return { version: 1, consented: ids(consented), disclosed: new Set() }
  const tail = disclosed === 'dv' ? '' : disclosed!.startsWith('dv.') ? disclosed!.slice(3) : undefined
  if (tail === undefined || !IDS.test(tail)) throw new AcStringError('the disclosed part must be "dv." followed by decimal ids separated by single dots')
  return { version: 2, consented: ids(consented), disclosed: ids(tail) }
}

/**
 * dcgate platforms the visitor refused as ATPs: shown to them (disclosed) without consent. A provider the string
 * does not name was not asked about, and is judged on the purposes alone (as version 1 strings, which list consents
 * only, leave every provider).
 */
export function atpsDenied(ac: AdditionalConsent): string[] {
  return Object.entries(ATP_IDS).filter(([, id]) => ac.disclosed.has(id) && !ac.consented.has(id)).map(([name]) => name)
}
