/**
 * Normalisation test vectors, one block per ad platform, taken from each vendor's own documentation (read
 * 2026-11-26; where and how each page was read: core/identity/README.md, "Sources"). A case is what an integrator
 * sends (`input`, the traits of IdentityTraits), the HashedIdentity variant it fills (`field`), and what the vendor
 * documents: the normalised text and/or the SHA-256 it publishes. Digests are literals copied from the vendor's page.
 *
 * - `derived` marks a case the vendor states as a rule without giving this example: `expected` is the rule applied
 *   by hand, and the text says which rule.
 * - `ours` marks a documented deviation: dcgate sends something else (`text`) or nothing (`null`), for the reason
 *   given. The test pins that behaviour, so a change to it is a decision, not an accident.
 * - `inRequest: false`: the adapter does not send this field today (the reason is given), so the vector is checked
 *   against hashIdentity only, not in the adapter's request.
 * - `oracle: 'meta-sdk'`: Meta's own normaliser (facebook-nodejs-business-sdk, ServerSideUtils.normalizeAndHash)
 *   must give the same digest for the same input.
 */
import type { HashedIdentity } from '../../core/delivery/types.ts'
import type { IdentityTraits } from '../../core/identity/hash.ts'

export interface VectorCase {
  input: IdentityTraits
  defaultCountry?: string
  field: keyof HashedIdentity
  expected: { text?: string, sha256?: string }
  derived?: string
  ours?: { text: string | null, why: string }
  inRequest?: false
  oracle?: 'meta-sdk'
  /** A page other than the block's, when this example comes from one. */
  source?: string
}

export interface VectorBlock {
  /** The adapter's registered name (adapters/index.ts). */
  platform: string
  source: string
  read: string
  cases: VectorCase[]
}

const READ = '2026-11-26'
const NO_NAMES_YET = 'the Google adapter uploads click conversions, which take only email and phone'

export const NORMALIZATION_VECTORS: VectorBlock[] = [
  {
    platform: 'meta',
    source: 'https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/customer-information-parameters',
    read: READ,
    cases: [
      { input: { email: 'John_Smith@gmail.com' }, field: 'email', expected: { text: 'john_smith@gmail.com', sha256: '62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f' }, oracle: 'meta-sdk' },
      { input: { phone: '(650)555-1212' }, defaultCountry: 'US', field: 'phoneDigits', expected: { text: '16505551212', sha256: 'e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176' } },
      { input: { phone: '+1 (650) 555-1212' }, field: 'phoneDigits', expected: { text: '16505551212' }, oracle: 'meta-sdk', derived: 'symbols removed, country code kept' },
      { input: { phone: '+44 844 412 4653' }, field: 'phoneDigits', expected: { text: '448444124653' }, oracle: 'meta-sdk', source: 'https://www.facebook.com/business/help/2082575038703844' },
      { input: { phone: '07911 123456' }, defaultCountry: 'GB', field: 'phoneDigits', expected: { text: '447911123456' }, derived: 'country code added, the national trunk 0 removed ("remove any leading zeros")' },
      { input: { first_name: 'Mary' }, field: 'firstName', expected: { text: 'mary', sha256: '6915771be1c5aa0c886870b6951b03d7eafc121fea0e80a5ea83beb7c449f4ec' }, oracle: 'meta-sdk' },
      { input: { first_name: '정' }, field: 'firstName', expected: { text: '정', sha256: '8fa8cd9c440be61d0151429310034083132b35975c4bea67fdd74158eb51db14' }, oracle: 'meta-sdk' },
      { input: { first_name: 'Valéry' }, field: 'firstName', expected: { text: 'valéry', sha256: '08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c' }, oracle: 'meta-sdk' },
      { input: { first_name: 'Vale\u0301ry' }, field: 'firstName', expected: { sha256: '08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c' }, derived: 'UTF-8 of the composed letter: "e" + combining acute is the same name' },
      { input: { last_name: 'Valéry' }, field: 'lastName', expected: { sha256: '08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c' }, oracle: 'meta-sdk', derived: 'ln: "See First Name (fn) for examples"' },
      { input: { last_name: "O'Brien-Smith" }, field: 'lastName', expected: { text: 'obriensmith' }, derived: '"lowercase only with no punctuation" (the SDK keeps punctuation, so it is no oracle here)' },
      { input: { city: 'New York' }, field: 'city', expected: { text: 'newyork' }, oracle: 'meta-sdk' },
      { input: { city: 'Paris' }, field: 'city', expected: { text: 'paris' }, oracle: 'meta-sdk' },
      { input: { city: 'London' }, field: 'city', expected: { text: 'london' }, oracle: 'meta-sdk' },
      { input: { state: 'AZ' }, field: 'state', expected: { text: 'az' }, oracle: 'meta-sdk' },
      { input: { state: 'California' }, field: 'state', expected: { text: 'ca' }, derived: 'the 2-character ANSI code of a US state' },
      { input: { postal_code: '94035' }, field: 'zip', expected: { text: '94035' }, oracle: 'meta-sdk' },
      { input: { postal_code: '94035-1234', country: 'US' }, field: 'zip', expected: { text: '94035' }, oracle: 'meta-sdk', derived: '"only the first 5 digits for U.S. zip codes"' },
      { input: { postal_code: '1987', country: 'AU' }, field: 'zip', expected: { text: '1987' }, oracle: 'meta-sdk' },
      { input: { postal_code: '75018', country: 'FR' }, field: 'zip', expected: { text: '75018' }, oracle: 'meta-sdk' },
      { input: { postal_code: 'M1 1AE', country: 'GB' }, field: 'zip', expected: { text: 'm11ae' }, oracle: 'meta-sdk' },
      { input: { country: 'United States' }, field: 'country', expected: { text: 'us', sha256: '79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621' } },
      { input: { country: 'US' }, field: 'country', expected: { text: 'us' }, oracle: 'meta-sdk' },
    ],
  },
  {
    platform: 'google_ads',
    source: 'https://developers.google.com/data-manager/api/devguides/concepts/formatting',
    read: READ,
    cases: [
      { input: { email: 'cloudy.sanfrancisco+shopping@gmail.com' }, field: 'emailGoogle', expected: { text: 'cloudysanfrancisco@gmail.com' } },
      { input: { email: 'user.name+NYC@Example.com' }, field: 'emailGoogle', expected: { text: 'user.name+nyc@example.com' } },
      { input: { email: ' Cloudy.San Francisco@GoogleMail.com ' }, field: 'emailGoogle', expected: { text: 'cloudysanfrancisco@googlemail.com' }, derived: 'leading, trailing and intermediate whitespace trimmed; googlemail.com treated as gmail.com' },
      { input: { phone: '(800)555-0100' }, defaultCountry: 'US', field: 'phoneE164', expected: { text: '+18005550100' } },
      { input: { first_name: 'Mrs. Jane' }, field: 'firstName', expected: { text: 'jane' }, inRequest: false, derived: 'given_name: "Don\'t include prefixes such as Mrs."' },
      { input: { last_name: 'Smith Jr.' }, field: 'lastName', expected: { text: 'smith' }, inRequest: false, derived: 'family_name: "Don\'t include suffixes such as Jr."' },
      {
        input: { first_name: 'Mary Ann' }, field: 'firstName', expected: { text: 'mary ann' }, inRequest: false,
        derived: 'names: only leading and trailing whitespace is trimmed (emails: intermediate too)',
        ours: { text: 'maryann', why: `one firstName variant serves Meta and Pinterest, who drop spaces; ${NO_NAMES_YET}` },
      },
    ],
  },
  {
    platform: 'tiktok',
    source: 'https://business-api.tiktok.com/portal/docs?id=1771100865818625',
    read: READ,
    cases: [
      { input: { email: ' ALICE_abc@gmail.com ' }, field: 'email', expected: { text: 'alice_abc@gmail.com', sha256: '848a771458438fc2ec420560d769fb9b9b86851ee338ec56517baabd79d3bb4f' } },
      { input: { phone: '(+1)2133734253' }, field: 'phoneE164', expected: { text: '+12133734253', sha256: '9f7ec22d72092cd3c0b58726ed9c2d91b92e51a3f29837508fb2948bb22dd2fd' } },
      { input: { external_id: 'user_123' }, field: 'externalId', expected: { sha256: '80fba0ae1c48e3978e43e4efc365e14e12ea0c830ba8ba5b9a2dafc7e3f2ab8b' } },
    ],
  },
  {
    platform: 'reddit',
    source: 'https://papaya-kheer-4b8a70.netlify.app/signals/conversions/reddit-pixel/manual-advanced-matching', // a mirror of Reddit's help page
    read: READ,
    cases: [
      { input: { email: 'Al.ice$+Apple@Example.Com' }, field: 'emailReddit', expected: { text: 'alice@example.com', sha256: 'ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976' } },
      { input: { email: 'alice@example.com' }, field: 'emailReddit', expected: { sha256: 'ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976' } },
      { input: { email: 'j_o-h.n+ads@ex-ample.com' }, field: 'emailReddit', expected: { text: 'john@ex-ample.com' }, derived: 'every non-alphanumeric character of the username removed, the domain untouched' },
    ],
  },
  {
    platform: 'microsoft_ads',
    source: 'https://learn.microsoft.com/en-us/advertising/guides/uet-conversion-api-integration',
    read: READ,
    cases: [
      { input: { email: 'john@contoso.com' }, field: 'emailMicrosoft', expected: { sha256: 'ec81f3ac7b2b19675bab9d54cf416f9f18cff87c97da5cca82c0f0891bc40602' } },
      { input: { email: ' J.ohn+bing@Contoso.com ' }, field: 'emailMicrosoft', expected: { text: 'john@contoso.com' }, derived: 'trim, dots and +alias removed from the user part, lowercase' },
      { input: { phone: '+14255551234' }, field: 'phoneE164', expected: { sha256: 'c59475d96e9f01d7d18d06cfad84dd02333207f02c0c2c5663ef2782cda0390e' } },
      { input: { phone: '(425) 555-1234' }, defaultCountry: 'US', field: 'phoneE164', expected: { text: '+14255551234' }, derived: 'E.164 with country code' },
    ],
  },
  {
    platform: 'pinterest',
    source: 'https://github.com/pinterest/api-description/blob/main/v5/openapi.yaml',
    read: READ,
    cases: [
      { input: { email: ' Jane.Doe@Example.com ' }, field: 'email', expected: { text: 'jane.doe@example.com' }, derived: 'em: "lowercase version of user\'s email addresses"' },
      { input: { phone: '+1 (425) 555-1234' }, field: 'phoneDigits', expected: { text: '14255551234' }, derived: 'ph: "only digits with country code, area code, and number"' },
      { input: { first_name: 'Mary' }, field: 'firstName', expected: { text: 'mary' }, derived: 'fn: "in lowercase"' },
      { input: { city: 'Menlo Park' }, field: 'city', expected: { text: 'menlopark' }, derived: 'ct: "in lowercase, and without spaces or punctuation"' },
      { input: { state: 'CA' }, field: 'state', expected: { text: 'ca' }, derived: 'st: "a two-letter code in lowercase"' },
      { input: { postal_code: '94025' }, field: 'zip', expected: { text: '94025' }, derived: 'zp: "only digits"' },
    ],
  },
  {
    platform: 'x',
    source: 'https://docs.x.com/x-ads-api/measurement/web-conversions',
    read: READ,
    cases: [
      {
        input: { phone: '+11234567890' }, field: 'phoneE164', expected: { text: '+11234567890', sha256: '1fa6b8d986d9b9cd01bf36951815158bbde9f520c0567c835dfe34783d0a4231' },
        ours: { text: null, why: 'area code 123 does not exist (NANP area codes never start with 1): a hash of it matches nobody, so none is sent' },
      },
      { input: { phone: '+1 (650) 555-1212' }, field: 'phoneE164', expected: { text: '+16505551212' }, derived: 'E.164 with "+", as the example above' },
      { input: { email: ' Jane.Doe@Example.com ' }, field: 'email', expected: { text: 'jane.doe@example.com' }, derived: 'hashed_email: lower case, leading and trailing spaces removed' },
    ],
  },
  {
    platform: 'linkedin',
    source: 'https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api',
    read: READ,
    cases: [
      { input: { email: ' Jane.Doe@Example.com ' }, field: 'email', expected: { text: 'jane.doe@example.com' }, derived: 'LinkedIn publishes no rule; trim and lowercase, as every other platform' },
    ],
  },
  {
    platform: 'ga4',
    source: 'https://developers.google.com/analytics/devguides/collection/ga4/uid-data',
    read: '2026-11-28',
    cases: [
      { input: { email: ' John.Smith@GMAIL.com ' }, field: 'emailGoogle', expected: { text: 'johnsmith@gmail.com' }, derived: 'trim, lowercase, and remove the periods before the domain of gmail.com and googlemail.com addresses' },
      { input: { email: 'Jane.Doe@Example.com' }, field: 'emailGoogle', expected: { text: 'jane.doe@example.com' }, derived: 'periods kept for other domains' },
      { input: { phone: '+1 (650) 555-1212' }, field: 'phoneE164', expected: { text: '+16505551212' }, derived: 'sha256_phone_number: remove all non-digit characters, add the + prefix (E.164)' },
    ],
  },
  {
    platform: 'snapchat',
    source: 'https://developers.snap.com/api/marketing-api/Conversions-API/Parameters',
    read: '2026-11-28',
    cases: [
      { input: { email: 'Person@Example.com' }, field: 'email', expected: { text: 'person@example.com', sha256: '542d240129883c019e106e3b1b2d3f3cb3537c43c425364de8e951d5a3083345' } },
      { input: { phone: '+44 844 412 4653' }, field: 'phoneDigits', expected: { text: '448444124653', sha256: 'dc008fda46e2e64002cf2f82a4906236282d431c4f75e5b60bfe79fc48546383' } },
      { input: { first_name: 'John' }, field: 'firstName', expected: { text: 'john', sha256: '96d9632f363564cc3032521409cf22a852f2032eec099ed5967c0d000cec607a' } },
      { input: { first_name: 'Raphaël' }, field: 'firstName', expected: { text: 'raphaël', sha256: 'e74bb89e718fe1e19c422a48382870399f8bf7ca8dfa008739e75b0be76627b7' } },
    ],
  },
]
