import { GppModel } from '@iabgpp/cmpapi'
import { describe, expect, it } from 'vitest'
import { atpsDenied, parseAcString } from '../../core/consent/ac.ts'
import { fromGppString } from '../../core/consent/gpp.ts'
import { ConsentStringError, readConsent } from '../../core/consent/read.ts'
import { tcString } from './tcf-fixtures.ts'

// Google's Additional Consent string (https://support.google.com/admanager/answer/9681920): Meta is Google ATP 89,
// Snap ATP 2572; neither is a GVL vendor.
describe('Google\'s Additional Consent string', () => {
  it('reads the specification\'s version 2 and version 1 forms', () => {
    expect(parseAcString('2~1.35.41.101~dv.9.21.81')).toEqual({ version: 2, consented: new Set([1, 35, 41, 101]), disclosed: new Set([9, 21, 81]) })
    expect(parseAcString('2~~dv.1.2.3.4.10')).toMatchObject({ consented: new Set(), disclosed: new Set([1, 2, 3, 4, 10]) })
    expect(parseAcString('2~1.2.3.4.10~dv.')).toMatchObject({ consented: new Set([1, 2, 3, 4, 10]), disclosed: new Set() })
    expect(parseAcString('2~~dv')).toMatchObject({ consented: new Set(), disclosed: new Set() })
    expect(parseAcString('1~1.35.41.101')).toEqual({ version: 1, consented: new Set([1, 35, 41, 101]), disclosed: new Set() })
  })

  it('refuses anything else, saying what is wrong', () => {
    const hostile = ['', '3~1~dv.', '0~1', '2~1', '2~1~disclosed.2', '2~1~dv2', '2~1..2~dv.', '2~.1~dv.', '2~1.~dv.', '2~1~dv.2.', '2~1~dv.2~3',
      '1~1~dv.', '2~١~dv.', '2~-1~dv.', '2~1 2~dv.', '2~1\u0000~dv.', '2~\ud800~dv.', `2~${'9'.repeat(40)}~dv.`, '2~1e3~dv.', '2~0x10~dv.']
    for (const text of hostile) expect(() => parseAcString(text), text).toThrow(/version|parts|decimal ids/)
  })

  it('a platform shown to the visitor without consent is refused; one consented to or not shown is not', () => {
    expect(atpsDenied(parseAcString('2~2572~dv.89'))).toEqual(['meta'])
    expect(atpsDenied(parseAcString('2~89.2572~dv.'))).toEqual([])
    expect(atpsDenied(parseAcString('2~~dv.1.2'))).toEqual([])
    expect(atpsDenied(parseAcString('1~1'))).toEqual([])
  })

  it('beside a TC string, its refusals join the TC string\'s vendor refusals', () => {
    const purposes = readConsent({ tcString: tcString([1, 3, 4, 7], [755, 804, 1126]), addtlConsent: '2~~dv.89.2572' }, 'tcf')
    expect(purposes!.vendors_denied).toEqual(['meta', 'snapchat'])
  })

  it('an unreadable one is refused naming its field', () => {
    expect(() => readConsent({ tcString: tcString([1], [755]), addtlConsent: '2~x~dv.' }, 'tcf')).toThrow(ConsentStringError)
    try {
      readConsent({ tcString: tcString([1], [755]), addtlConsent: '2~x~dv.' }, 'tcf')
    }
    catch (error) {
      expect((error as ConsentStringError).field).toBe('addtlConsent')
    }
  })
})

describe('GPP: the EU TCF section (tcfeuv2, id 2)', () => {
  const gpp = (purposes: number[], vendors: number[]): string => {
    const model = new GppModel()
    model.setFieldValue('tcfeuv2', 'PurposeConsents', Array.from({ length: 24 }, (_, i) => purposes.includes(i + 1)))
    model.setFieldValue('tcfeuv2', 'VendorConsents', vendors)
    return model.encode()
  }

  it('is read as a TC string is: purposes and vendor consents', () => {
    expect(fromGppString(gpp([1, 3, 4, 7], [755, 804, 1126]))).toEqual({ source: 'gpp', us_opt_out: false, measurement: 'granted', advertising: 'granted', ad_user_data: 'granted', ad_personalization: 'granted' })
    expect(fromGppString(gpp([1, 7], [755]))).toMatchObject({ measurement: 'granted', advertising: 'granted', ad_personalization: 'denied', vendors_denied: ['linkedin', 'microsoft_ads'] })
  })

  it('purpose 1 refused: no measurement, no advertising', () => {
    expect(fromGppString(gpp([3, 4, 7], [755]))).toMatchObject({ measurement: 'denied', advertising: 'denied' })
  })

  it('a string without the EU section says nothing of the purposes', () => {
    const us = new GppModel()
    us.setFieldValue('usnat', 'SaleOptOut', 2)
    expect(fromGppString(us.encode())).toEqual({ source: 'gpp', us_opt_out: false })
  })
})
