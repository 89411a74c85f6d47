/**
 * A TCF v2 TC string as purposes, decoded with the IAB Tech Lab's own library; the same reading serves the EU TCF
 * section of a GPP string (gpp.ts). The mapping, with its sources, is in docs/privacy.md ("Consent per purpose").
 */
import { createRequire } from 'node:module'
import type * as TcfCore from '@iabtechlabtcf/core'
import type { ConsentPurposes, Signal } from './purposes.ts'

let tcfCore: typeof TcfCore | undefined
/** Loaded with the first TC string: the library costs about 14 MB of memory that a server which sees none never needs. */
const library = (): typeof TcfCore => (tcfCore ??= createRequire(import.meta.url)('@iabtechlabtcf/core') as typeof TcfCore)

/**
 * dcgate platforms by their IAB Global Vendor List id. Only ids read in a published vendor list and the vendor's own
 * pages are here; a platform without one is judged on the purposes alone (docs/privacy.md says which and why).
 */
export const GVL_VENDOR_IDS: Readonly<Record<string, number>> = {
  // "Google Advertising Products", vendor 755 of the GVL.
  google_ads: 755,
  // "LinkedIn Ireland Unlimited Company", vendor 804 of the GVL.
  linkedin: 804,
  // "Microsoft Advertising", vendor 1126 of the GVL (Microsoft's UET TCF page names the same id).
  microsoft_ads: 1126,
}

export class TcStringError extends Error {}

const signal = (granted: boolean): Signal => (granted ? 'granted' : 'denied')

/** What a TC string (or GPP's EU TCF section) says: the purposes and the vendors given consent. */
export interface TcfChoices {
  purpose: (id: number) => boolean
  vendor: (id: number) => boolean
}

/** Purposes from a TC string; throws TcStringError when it cannot be read. */
export function fromTcString(tcString: string): ConsentPurposes {
  let model: ReturnType<typeof TcfCore.TCString.decode>
  try {
    model = library().TCString.decode(tcString)
  }
  catch (error) {
    throw new TcStringError(`is not a TC string the IAB's library can read (${error instanceof Error ? error.message : 'unreadable'})`)
  }
  return fromTcfChoices({ purpose: (id) => model.purposeConsents.has(id), vendor: (id) => model.vendorConsents.has(id) })
}

export function fromTcfChoices({ purpose: has, vendor }: TcfChoices): ConsentPurposes {
  const vendorsDenied = Object.entries(GVL_VENDOR_IDS).filter(([, id]) => !vendor(id)).map(([name]) => name)
  return {
    source: 'tcf',
    // Purpose 1 (store and/or access information on a device) carries dcgate's first-party identifiers.
    measurement: signal(has(1)),
    // Google's TCF mapping: purpose 1 or 7 (measure advertising performance) denied → ad_storage / ad_user_data denied.
    advertising: signal(has(1) && has(7)),
    ad_user_data: signal(has(1) && has(7)),
    // Purposes 3 (personalised advertising profile) and 4 (use it to select ads) → ad_personalization.
    ad_personalization: signal(has(3) && has(4)),
    ...(vendorsDenied.length ? { vendors_denied: vendorsDenied } : {}),
  }
}
