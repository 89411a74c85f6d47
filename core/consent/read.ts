/**
 * One consent from what a page or a server conversion carries: a TC string (with Google's Additional Consent string
 * beside it), a GPP string, Consent Mode's four signals, or purposes as dcgate names them. A TC string wins (it is
 * the record the visitor's choice was made in), then GPP; signals or purposes fill what the strings leave unsaid.
 */
import * as v from 'valibot'
import { AcStringError, atpsDenied, parseAcString } from './ac.ts'
import { ConsentFields, type ClientConsent } from './fields.ts'
import { fromGppString, GppStringError } from './gpp.ts'
import { fromConsentMode, type ConsentPurposes, type ConsentSource } from './purposes.ts'
import { fromTcString, TcStringError } from './tcf.ts'

const readable = (read: (text: string) => unknown) => (text: string): boolean => {
  try {
    read(text)
    return true
  }
  catch {
    return false
  }
}

/** The same fields for a server conversion, whose strings are refused (4xx, naming the field) when unreadable. */
export const CheckedConsentFields = {
  ...ConsentFields,
  tcString: v.optional(v.pipe(ConsentFields.tcString.wrapped, v.check(readable(fromTcString), 'is not a TCF v2 TC string'))),
  gppString: v.optional(v.pipe(ConsentFields.gppString.wrapped, v.check(readable(fromGppString), 'is not a GPP string'))),
  addtlConsent: v.optional(v.pipe(ConsentFields.addtlConsent.wrapped, v.check(readable(parseAcString), 'is not a Google Additional Consent string ("2~<consented ids>~dv.<disclosed ids>")'))),
}

/** Google's Additional Consent extends a TC string; alone it says nothing Google's specification gives a meaning to. */
export const AC_NEEDS_TC = 'is read only alongside a tcString (Google\'s Additional Consent extends TCF)'

export type ConsentInput = Partial<Pick<ClientConsent, 'tcString' | 'gppString' | 'addtlConsent' | 'ad_storage' | 'analytics_storage' | 'ad_user_data' | 'ad_personalization' | 'measurement' | 'advertising'>>

type StringField = 'tcString' | 'gppString' | 'addtlConsent'

/** A TC, GPP or Additional Consent string that cannot be read, named by its field. */
export class ConsentStringError extends Error {
  readonly field: StringField
  constructor(field: StringField, message: string) {
    super(message)
    this.field = field
  }
}

/**
 * The purposes the input says, or undefined when it says none. `source` names the tool when no string does.
 * Throws ConsentStringError for an unreadable string.
 */
export function readConsent(input: ConsentInput, source: ConsentSource): ConsentPurposes | undefined {
  const signals = { ...fromConsentMode(input, source), ...pick(input) }
  const said = Object.keys(signals).length > 1
  if (input.tcString) return withAdditional({ ...signals, ...decode('tcString', () => fromTcString(input.tcString!)) }, input.addtlConsent)
  if (input.gppString) return { ...signals, ...decode('gppString', () => fromGppString(input.gppString!)) }
  return said ? signals : undefined
}

/** The platforms an Additional Consent string refuses join those the TC string refused. */
function withAdditional(purposes: ConsentPurposes, addtlConsent: string | undefined): ConsentPurposes {
  if (!addtlConsent) return purposes
  const refused = decode('addtlConsent', () => atpsDenied(parseAcString(addtlConsent)))
  const vendorsDenied = [...(purposes.vendors_denied ?? []), ...refused]
  return vendorsDenied.length ? { ...purposes, vendors_denied: vendorsDenied } : purposes
}

function pick(input: ConsentInput): Partial<ConsentPurposes> {
  return { ...(input.measurement ? { measurement: input.measurement } : {}), ...(input.advertising ? { advertising: input.advertising } : {}) }
}

function decode<T>(field: StringField, read: () => T): T {
  try {
    return read()
  }
  catch (error) {
    if (error instanceof TcStringError || error instanceof GppStringError || error instanceof AcStringError) throw new ConsentStringError(field, error.message)
    throw error
  }
}
