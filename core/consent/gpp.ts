/**
 * A GPP string (IAB Global Privacy Platform) as purposes, decoded with the IAB Tech Lab's own library: its US
 * national and state sections' opt-outs of sale, sharing and targeted advertising become a US opt-out, which the
 * site's `consent.usPrivacy` then applies (core/delivery/decide.ts). (An EU TCF section inside is not
 * read here: a site with TCF gives its TC string, which the script reads from `__tcfapi`.)
 */
import { GppModel, Sections } from '@iabgpp/cmpapi'
import type { ConsentPurposes } from './purposes.ts'

/** The opt-out fields US sections carry (a section has those its law names); 1 means opted out. */
const OPT_OUT_FIELDS = ['SaleOptOut', 'SharingOptOut', 'TargetedAdvertisingOptOut'] as const
const US_SECTIONS = Sections.SECTION_ORDER.filter((name) => name.startsWith('us') && name !== 'uspv1')
export const MAX_GPP_STRING = 8192

export class GppStringError extends Error {}

export function fromGppString(gppString: string): ConsentPurposes {
  let model: GppModel
  try {
    model = new GppModel(gppString)
    // The library decodes lazily: reading the sections is what fails on a bad string.
    model.getSectionIds()
  }
  catch (error) {
    throw new GppStringError(`is not a GPP string the IAB's library can read (${error instanceof Error ? error.message : 'unreadable'})`)
  }
  const usOptOut = US_SECTIONS.some((section) => model.hasSection(section)
    && OPT_OUT_FIELDS.some((field) => safeField(model, section, field) === 1))
  return { source: 'gpp', us_opt_out: usOptOut }
}

function safeField(model: GppModel, section: string, field: string): unknown {
  try {
    return model.getFieldValue(section, field)
  }
  catch {
    return undefined
  }
}
