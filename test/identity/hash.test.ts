import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { hashIdentity, isSha256Hex, sha256Hex } from '../../core/identity/hash.ts'
import {
  normalizeCity, normalizeCountry, normalizeEmail, normalizeEmailForGoogle, normalizeEmailForMicrosoft, normalizeEmailForReddit,
  normalizeExternalId, normalizeName, normalizePhone, normalizeState, normalizeZip,
} from '../../core/identity/normalize.ts'

// Expected digests are literals (each re-checked with `printf %s VALUE | sha256sum`), never computed by the code under test.
const HASH = {
  // Meta, Customer Information Parameters (em, ph, fn examples):
  // https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/customer-information-parameters
  metaEmail: '62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f', // john_smith@gmail.com
  metaPhone: 'e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176', // 16505551212
  metaMary: '6915771be1c5aa0c886870b6951b03d7eafc121fea0e80a5ea83beb7c449f4ec', // mary
  metaValery: '08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c', // valéry
  // Microsoft Advertising, UET Conversions API userData em/ph examples:
  // https://learn.microsoft.com/en-us/advertising/guides/uet-conversion-api-integration
  msEmail: 'ec81f3ac7b2b19675bab9d54cf416f9f18cff87c97da5cca82c0f0891bc40602', // john@contoso.com
  msPhone: 'c59475d96e9f01d7d18d06cfad84dd02333207f02c0c2c5663ef2782cda0390e', // +14255551234
  // X Ads API, Conversion API hashed_phone_number example: https://docs.x.com/x-ads-api/measurement/web-conversions
  xPhone: '1fa6b8d986d9b9cd01bf36951815158bbde9f520c0567c835dfe34783d0a4231', // +11234567890
  // Reddit for Business help, Signals > Conversions > Reddit Pixel > "Manual Advanced Matching" (email example; read via a mirror)
  redditEmail: 'ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976', // alice@example.com
  // Computed locally with sha256sum from the normalised strings the platforms' rules give:
  plusE164Meta: '1e231c66011e7a2d867a9cfae267a6aff103cf4913640b6e71a99850fc0ffbc8', // +16505551212
  digitsMs: 'f8a0621a89b87b16447d34d2169bdba8e3eaae523b45df87d86108ee65bd1d6f', // 14255551234
  johnSmithPlus: 'f1897ad9eef7ae36b131f0e9f6e296014fb17716ac581a76d4abcdf78792f05f', // john.smith+x@gmail.com
  johnSmithGoogle: '3586de92bb3636d0885a12eff961429a32e4ebd764b96f50d85d016f9338d586', // johnsmith@gmail.com
  menloPark: '0007a3d64c01e23d5075203c5977c14e4f7e01a3fc570686fcc50b5e1dd42685', // menlopark
  ca: '6959097001d10501ac7d54c0bdb8db61420f658f2922cc26e46d536119a31126', // ca
  zip94025: 'b9a9cf3cd3723a2e91b7c23ecf68456e872b6e5d86e5cab7f3d45a7302da32c7', // 94025
  us: '79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621', // us
  de: '959a45d44e6fcf58361ed004681556fe50129f2109e817dec098c00c9e5d2578', // de
  dePhoneE164: '74bd805bcc47f8603082430ca056311389e38b74fcdfbc32bcb5c6a9269ff3bf', // +49301234567
  dePhoneDigits: '2f9fbc550b12cbc0e6242384cc472bd1e4f058a8b773f189f7acb86d202655ce', // 49301234567
  gbPhoneE164: '20b18ac9de7b3aad174961827d8e451c410af9aedfd1d699927f4b29b81aa1fa', // +447911123456
  obrien: 'b4cb6cb33fe4b865868de825023a1e2790dc12ac01ecc8d7c5afe8254071c8ba', // obrien
  crmUser: 'b3b22218aa65abfed90f52e778498b5feae38065a5cdf04027e4f355908c1298', // CRM-User-42
}

describe('sha256Hex and isSha256Hex', () => {
  it('hashes UTF-8 to lowercase hex, matching the platforms\' published digests', () => {
    expect(sha256Hex('john_smith@gmail.com')).toBe(HASH.metaEmail)
    expect(sha256Hex('16505551212')).toBe(HASH.metaPhone)
    expect(sha256Hex('valéry')).toBe(HASH.metaValery)
    expect(sha256Hex('+11234567890')).toBe(HASH.xPhone)
  })

  it('recognises exactly 64 hex characters in either case, anchored at both ends', () => {
    expect(isSha256Hex(HASH.metaEmail)).toBe(true)
    expect(isSha256Hex(HASH.metaEmail.toUpperCase())).toBe(true)
    expect(isSha256Hex(HASH.metaEmail.slice(1))).toBe(false)
    expect(isSha256Hex(`${HASH.metaEmail}0`)).toBe(false)
    expect(isSha256Hex(`x${HASH.metaEmail}`)).toBe(false)
    expect(isSha256Hex(`${HASH.metaEmail.slice(1)}g`)).toBe(false)
    expect(isSha256Hex(undefined)).toBe(false)
  })
})

describe('email', () => {
  it('trims, lowercases and rejects what is not an address', () => {
    expect(normalizeEmail('  John_Smith@Gmail.COM \n')).toBe('john_smith@gmail.com')
    expect(normalizeEmail('john smith @example.com')).toBe('johnsmith@example.com')
    for (const bad of ['', '   ', 'john', 'john@', '@example.com', 'a@b', 'a@@example.com', 'a@example.c', 'a@example.com.']) {
      expect(normalizeEmail(bad), bad).toBeUndefined()
    }
  })

  it('for Google drops dots and +suffix on gmail.com and googlemail.com only (Data Manager API examples)', () => {
    // https://developers.google.com/data-manager/api/devguides/concepts/formatting
    expect(normalizeEmailForGoogle(normalizeEmail('cloudy.sanfrancisco+shopping@gmail.com')!)).toBe('cloudysanfrancisco@gmail.com')
    expect(normalizeEmailForGoogle(normalizeEmail('user.name+NYC@Example.com')!)).toBe('user.name+nyc@example.com')
    expect(normalizeEmailForGoogle('j.o.h.n.doe@googlemail.com')).toBe('johndoe@googlemail.com')
    expect(normalizeEmailForGoogle('john.doe@gmail.co.uk')).toBe('john.doe@gmail.co.uk')
    expect(normalizeEmailForGoogle('+only@gmail.com')).toBe('+only@gmail.com')
  })

  it('for Microsoft drops every dot and the +alias of any domain (UET CAPI doc: john@contoso.com vector)', () => {
    expect(normalizeEmailForMicrosoft('j.o.h.n+ads@contoso.com')).toBe('john@contoso.com')
    expect(normalizeEmailForMicrosoft('+only@contoso.com')).toBe('+only@contoso.com')
  })

  it('for Reddit drops the +alias, then every non-alphanumeric character of the local part (Al.ice$+Apple@Example.Com)', () => {
    expect(normalizeEmailForReddit(normalizeEmail('Al.ice$+Apple@Example.Com')!)).toBe('alice@example.com')
    expect(normalizeEmailForReddit('j_o-h.n@ex-ample.com')).toBe('john@ex-ample.com')
  })

  it('hashes each platform variant, and passes a digest through into all of them', () => {
    const same = (hash: string) => ({ email: hash, emailGoogle: hash, emailMicrosoft: hash, emailReddit: hash })
    expect(hashIdentity({ email: ' John_Smith@Gmail.com ' })).toEqual({ ...same(HASH.metaEmail), emailMicrosoft: sha256Hex('john_smith@gmail.com'), emailReddit: sha256Hex('johnsmith@gmail.com') })
    expect(hashIdentity({ email: 'John.Smith+x@GMAIL.com' })).toEqual({ ...same(HASH.johnSmithGoogle), email: HASH.johnSmithPlus })
    expect(hashIdentity({ email: 'John@Contoso.com' })).toEqual(same(HASH.msEmail))
    expect(hashIdentity({ email: 'J.ohn+bing@Contoso.com' }).emailMicrosoft).toBe(HASH.msEmail)
    expect(hashIdentity({ email: 'alice@example.com' }).email).toBe(HASH.redditEmail)
    expect(hashIdentity({ email: 'Al.ice$+Apple@Example.Com' }).emailReddit).toBe(HASH.redditEmail)
    expect(hashIdentity({ email: HASH.metaEmail.toUpperCase() })).toEqual(same(HASH.metaEmail))
    expect(hashIdentity({ email: ` ${HASH.metaEmail} ` })).toEqual(same(HASH.metaEmail))
  })

  it('omits empty and invalid addresses, a 63-character hex string included (not a digest, so read as text: no email)', () => {
    expect(hashIdentity({ email: '' })).toEqual({})
    expect(hashIdentity({ email: 'not an email' })).toEqual({})
    expect(hashIdentity({ email: HASH.metaEmail.slice(1) })).toEqual({})
  })
})

describe('phone', () => {
  it('turns national and international US, GB and DE numbers into E.164', () => {
    expect(normalizePhone('(650)555-1212', 'US')).toBe('+16505551212')
    expect(normalizePhone('650.555.1212 ext. 12', 'us')).toBe('+16505551212')
    expect(normalizePhone('+1 (650) 555-1212')).toBe('+16505551212')
    expect(normalizePhone('16505551212')).toBe('+16505551212')
    expect(normalizePhone('(800)555-0100', 'US')).toBe('+18005550100') // Google Data Manager API example
    expect(normalizePhone('07911 123456', 'GB')).toBe('+447911123456')
    expect(normalizePhone('07911 123456', 'United Kingdom')).toBe('+447911123456')
    expect(normalizePhone('+44 (0)7911 123456')).toBe('+447911123456')
    expect(normalizePhone('030 1234567', 'DE')).toBe('+49301234567')
    expect(normalizePhone('030 1234567', 'Germany')).toBe('+49301234567')
    expect(normalizePhone('0049 30 1234567')).toBe('+49301234567')
    expect(normalizePhone('011 49 30 1234567', 'US')).toBe('+49301234567')
    expect(normalizePhone('+49 30 1234567', 'US')).toBe('+49301234567')
  })

  it('reads written forms: a country code in parentheses, a tel: prefix, full-width digits, a trunk 0 after the code', () => {
    expect(normalizePhone('(+1)2133734253')).toBe('+12133734253') // TikTok Events API example
    expect(normalizePhone('( +44 ) 20 7946 0958', 'US')).toBe('+442079460958')
    expect(normalizePhone('tel:+1-650-555-1212')).toBe('+16505551212')
    expect(normalizePhone('＋１ ６５０ ５５５ １２１２')).toBe('+16505551212')
    expect(normalizePhone('+33 (0)6 12 34 56 78')).toBe('+33612345678')
    expect(normalizePhone('+39 06 1234 5678')).toBe('+390612345678') // Italy keeps its leading 0
    expect(normalizePhone('(0)20 7946 0958', 'GB')).toBe('+442079460958')
  })

  it('rejects what is not a valid number, and national numbers without a country', () => {
    for (const [bad, country] of [
      ['', 'US'], ['abc', 'US'], ['12345', 'US'], ['+1 555 123 4567', undefined], ['+1 123 456 7890', undefined],
      ['+999 1234567', undefined], ['07911 123456', undefined], ['call 650 555 1212', 'US'], ['+49 30', undefined],
    ] as const) expect(normalizePhone(bad, country), bad).toBeUndefined()
  })

  it('hashes E.164 with "+" and digits without it, reading national numbers in the traits\' country first', () => {
    expect(hashIdentity({ phone: '(650) 555-1212' }, { defaultCountry: 'US' })).toEqual({ phoneE164: HASH.plusE164Meta, phoneDigits: HASH.metaPhone })
    expect(hashIdentity({ phone: '+1 425 555 1234' })).toEqual({ phoneE164: HASH.msPhone, phoneDigits: HASH.digitsMs })
    expect(hashIdentity({ phone: '030 1234567', country: 'Germany' }, { defaultCountry: 'US' })).toEqual({
      phoneE164: HASH.dePhoneE164, phoneDigits: HASH.dePhoneDigits, country: HASH.de,
    })
    expect(hashIdentity({ phone: '07911 123456' }, { defaultCountry: 'gb' })).toMatchObject({ phoneE164: HASH.gbPhoneE164 })
    expect(hashIdentity({ phone: '07911 123456' })).toEqual({})
    expect(hashIdentity({ phone: '+1 123 456 7890' })).toEqual({})
  })

  it('passes a digest through into both variants', () => {
    expect(hashIdentity({ phone: HASH.metaPhone.toUpperCase() })).toEqual({ phoneE164: HASH.metaPhone, phoneDigits: HASH.metaPhone })
  })
})

describe('names, city, state, zip, country, external id', () => {
  it('names: lowercase, no punctuation or spaces, any script kept in NFC', () => {
    expect(normalizeName(' Mary ')).toBe('mary')
    expect(normalizeName('Valéry')).toBe('valéry')
    expect(normalizeName('Vale\u0301ry')).toBe('valéry')
    expect(normalizeName("O'Brien")).toBe('obrien')
    expect(normalizeName('Mary-Jane')).toBe('maryjane')
    expect(normalizeName('Jean Luc')).toBe('jeanluc')
    expect(normalizeName('José-María')).toBe('josémaría')
    expect(normalizeName('ŻÓŁĆ')).toBe('żółć')
    expect(normalizeName('李小龍')).toBe('李小龍')
    expect(normalizeName('...')).toBeUndefined()
    expect(normalizeName('Mrs. Jane')).toBe('jane')
    expect(normalizeName('Dr Jean-Luc')).toBe('jeanluc')
    expect(normalizeName('Smith Jr.')).toBe('smith')
    expect(normalizeName('Smith, III')).toBe('smith')
    expect(normalizeName('Sir')).toBe('sir')
    expect(normalizeName('Jr.')).toBe('jr')
    expect(normalizeName('Mrsa')).toBe('mrsa')
    expect(hashIdentity({ first_name: 'Mary', last_name: "O'Brien" })).toEqual({ firstName: HASH.metaMary, lastName: HASH.obrien })
    expect(hashIdentity({ first_name: 'VALÉRY' })).toEqual({ firstName: HASH.metaValery })
  })

  it('city: lowercase letters only', () => {
    expect(normalizeCity('Menlo Park')).toBe('menlopark')
    expect(normalizeCity('St. Louis')).toBe('stlouis')
    expect(normalizeCity('São Paulo')).toBe('sãopaulo')
    expect(normalizeCity('Köln 1')).toBe('köln')
    expect(normalizeCity(' - ')).toBeUndefined()
  })

  it('state: US and Canadian names become two-letter codes; other regions stay normalised text', () => {
    expect(normalizeState('California')).toBe('ca')
    expect(normalizeState('CA')).toBe('ca')
    expect(normalizeState('N.Y.')).toBe('ny')
    expect(normalizeState('new york')).toBe('ny')
    expect(normalizeState('District of Columbia')).toBe('dc')
    expect(normalizeState('Québec')).toBe('qc')
    expect(normalizeState('Newfoundland and Labrador')).toBe('nl')
    expect(normalizeState('Bayern')).toBe('bayern')
    expect(normalizeState(' ')).toBeUndefined()
  })

  it('zip: lowercase without spaces or dashes; US keeps five digits', () => {
    expect(normalizeZip('94025-1234', 'US')).toBe('94025')
    expect(normalizeZip('94025 1234')).toBe('94025')
    expect(normalizeZip('2134', 'United States')).toBe('02134')
    expect(normalizeZip('no zip', 'US')).toBeUndefined()
    expect(normalizeZip('SW1A 1AA', 'GB')).toBe('sw1a1aa')
    expect(normalizeZip('10115', 'DE')).toBe('10115')
    expect(normalizeZip('01310-100', 'BR')).toBe('01310100')
  })

  it('country: ISO alpha-2 lowercase from codes, names in several languages and common aliases', () => {
    const cases: [string, string | undefined][] = [
      ['US', 'us'], ['us', 'us'], ['United States', 'us'], ['USA', 'us'], ['Germany', 'de'], ['Deutschland', 'de'],
      ['Allemagne', 'de'], ['United Kingdom', 'gb'], ['UK', 'gb'], ['Côte d’Ivoire', 'ci'], ['Turkey', 'tr'],
      ['Türkiye', 'tr'], ['Netherlands', 'nl'], ['España', 'es'], ['XX', undefined], ['EU', undefined],
      ['Atlantis', undefined], ['', undefined],
    ]
    for (const [input, code] of cases) expect(normalizeCountry(input), input).toBe(code)
  })

  it('external id: trimmed only, case kept', () => {
    expect(normalizeExternalId('  CRM-User-42 ')).toBe('CRM-User-42')
    expect(normalizeExternalId('   ')).toBeUndefined()
    expect(hashIdentity({ external_id: ' CRM-User-42 ' })).toEqual({ externalId: HASH.crmUser })
  })

  it('hashes a full US address the way Meta reads it, and ignores street', () => {
    expect(hashIdentity({
      city: 'Menlo Park', state: 'California', postal_code: '94025-1234', country: 'United States', street: '1 Hacker Way',
    })).toEqual({ city: HASH.menloPark, state: HASH.ca, zip: HASH.zip94025, country: HASH.us })
  })
})

describe('hashIdentity as a whole', () => {
  it('omits every empty field and never hashes an empty string', () => {
    const empty = { email: '', phone: ' ', first_name: '', last_name: '  ', street: '', postal_code: '', city: '', state: '', country: '', external_id: ' ' }
    expect(hashIdentity(empty, { defaultCountry: 'US' })).toEqual({})
  })

  it('hashes a 63-character hex string as text instead of passing it through', () => {
    const almost = HASH.metaMary.slice(1)
    expect(hashIdentity({ external_id: almost })).toEqual({ externalId: sha256Hex(almost) })
    expect(hashIdentity({ external_id: almost }).externalId).not.toBe(almost)
  })

  it('passes pre-hashed values through unchanged in every field, lowercased', () => {
    const h = HASH.menloPark.toUpperCase()
    expect(hashIdentity({ first_name: h, last_name: h, city: h, state: h, postal_code: h, country: h, external_id: h })).toEqual({
      firstName: HASH.menloPark, lastName: HASH.menloPark, city: HASH.menloPark, state: HASH.menloPark,
      zip: HASH.menloPark, country: HASH.menloPark, externalId: HASH.menloPark,
    })
  })

  it('property: every value it returns is a lowercase SHA-256 hex digest, whatever the input', () => {
    const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.emailAddress(), fc.stringMatching(/^\+?[\d ()-]{0,16}$/))
    const traits = fc.record({
      email: text, phone: text, first_name: text, last_name: text, postal_code: text, city: text, state: text, country: text, external_id: text,
    }, { requiredKeys: [] })
    fc.assert(fc.property(traits, t => Object.values(hashIdentity(t, { defaultCountry: 'US' })).every(v => /^[0-9a-f]{64}$/.test(v))))
  })

  it('property: hashing its own output again changes nothing', () => {
    fc.assert(fc.property(fc.emailAddress(), fc.string(), (email, name) => {
      const once = hashIdentity({ email, first_name: name })
      const again = hashIdentity({ email: once.email, first_name: once.firstName })
      expect(again.email).toBe(once.email)
      expect(again.firstName).toBe(once.firstName)
    }))
  })

  it('property: normalisers are idempotent', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), s => {
      for (const f of [normalizeName, normalizeCity, normalizeState, normalizeCountry, normalizeExternalId]) {
        const once = f(s)
        if (once !== undefined) expect(f(once)).toBe(once)
      }
      const email = normalizeEmail(s)
      if (email !== undefined) expect(normalizeEmail(email)).toBe(email)
    }))
  })
})
