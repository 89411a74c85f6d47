/**
 * A GPP string (IAB Global Privacy Platform) as purposes, decoded with the IAB Tech Lab's own library. Its EU TCF
 * section (`tcfeuv2`, section id 2) is read as a TC string is (tcf.ts), so a consent tool that speaks only GPP in the
 * EU is followed; its US national and state sections' opt-outs of sale, sharing and targeted advertising become a US
 * opt-out, which the site's `consent.usPrivacy` then applies (core/delivery/decide.ts).
 */
import { createRequire } from 'node:module'
import type * as GppApi from '@iabgpp/cmpapi'
import type { ConsentPurposes } from './purposes.ts'
import { fromTcfChoices } from './tcf.ts'

let gppApi: typeof GppApi | undefined
/** Loaded with the first GPP string: the library costs about 20 MB of memory that a server which sees none never needs. */
const library = (): typeof GppApi => (gppApi ??= createRequire(import.meta.url)('@iabgpp/cmpapi') as typeof GppApi)

/** The opt-out fields US sections carry (a section has those its law names); 1 means opted out. */
const OPT_OUT_FIELDS = ['SaleOptOut', 'SharingOptOut', 'TargetedAdvertisingOptOut'] as const
let usSections: string[] | undefined
const US_SECTIONS = (): string[] => (usSections ??= library().Sections.SECTION_ORDER.filter((name) => name.startsWith('us') && name !== 'uspv1'))

export class GppStringError extends Error {}

export function fromGppString(gppString: string): ConsentPurposes {
  let model: GppApi.GppModel
  try {
    model = new (library().GppModel)(gppString)
    // The library decodes lazily: reading the sections is what fails on a bad string.
    model.getSectionIds()
  }
  catch (error) {
    throw new GppStringError(`is not a GPP string the IAB's library can read (${error instanceof Error ? error.message : 'unreadable'})`)
  }
  const usOptOut = US_SECTIONS().some((section) => model.hasSection(section)
    && OPT_OUT_FIELDS.some((field) => safeField(model, section, field) === 1))
  return { ...euTcf(model), source: 'gpp', us_opt_out: usOptOut }
}

/** The EU TCF section's purposes and vendors, when the string has one. */
function euTcf(model: GppApi.GppModel): Partial<ConsentPurposes> {
  if (!model.hasSection('tcfeuv2')) return {}
  const purposes = safeField(model, 'tcfeuv2', 'PurposeConsents')
  const vendors = safeField(model, 'tcfeuv2', 'VendorConsents')
  // PurposeConsents holds purpose 1 at index 0; VendorConsents the ids given consent.
  const granted = Array.isArray(purposes) ? purposes : []
  const consented = new Set(Array.isArray(vendors) ? vendors : [])
  return fromTcfChoices({ purpose: (id) => granted[id - 1] === true, vendor: (id) => consented.has(id) })
}

function safeField(model: GppApi.GppModel, section: string, field: string): unknown {
  try {
    return model.getFieldValue(section, field)
  }
  catch {
    return undefined
  }
}
