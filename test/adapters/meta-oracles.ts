/**
 * Meta's own code as oracles for the Meta adapter (dev dependencies, never imported at run time):
 * - capi-param-builder-nodejs, Meta's parameter builder: dcgate's fbc and fbp are the ones it passes on;
 * - facebook-nodejs-business-sdk, Meta's business SDK: every server event dcgate sends is rebuilt with the SDK's
 *   ServerEvent, UserData, CustomData and Content and serialised again; a field the SDK does not know fails.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ParamBuilder } from 'capi-param-builder-nodejs'
import { Content, CustomData, ServerEvent, UserData } from 'facebook-nodejs-business-sdk'
import meta from '../../adapters/ads/meta/index.ts'
import type { MetaOptions } from '../../adapters/ads/meta/map.ts'
import type { ConversionEvent } from '../../core/delivery/types.ts'
import { givenClickIds } from '../../core/delivery/match.ts'
import { fixtureEvents, leadFixture, nobodyFixture, purchaseFixture } from '../contract/fixtures.ts'

type Json = Record<string, unknown>
type SdkObject = { normalize: () => Json } & Record<string, unknown>

/** Meta's user_data keys and the UserData setter the SDK serialises each from (names from the SDK's user-data.js). */
const USER_DATA_SETTERS: Record<string, string> = {
  em: 'setEmails', ph: 'setPhones', fn: 'setFirstNames', ln: 'setLastNames', ct: 'setCities', st: 'setStates', zp: 'setZips',
  country: 'setCountries', external_id: 'setExternalIds', client_ip_address: 'setClientIpAddress', client_user_agent: 'setClientUserAgent',
  fbc: 'setFbc', fbp: 'setFbp', lead_id: 'setLeadId',
}

/**
 * custom_data fields Meta documents that the SDK's CustomData has no setter for: the Conversion Leads fields
 * (https://developers.facebook.com/docs/marketing-api/conversions-api/conversion-leads-integration/payload-specification).
 * The SDK carries them as custom_properties, which is how it sends any field outside its list.
 */
const DOCUMENTED_CUSTOM_PROPERTIES = new Set(['event_source', 'lead_event_source'])

const pascal = (key: string) => key.split('_').map((part) => part[0]!.toUpperCase() + part.slice(1)).join('')

/** Calls the SDK's own setter for each field; a field without one is a field the SDK does not know. */
function fill(target: SdkObject, fields: Json, where: string, convert: (key: string, value: unknown) => unknown = (_key, value) => value): SdkObject {
  for (const [key, value] of Object.entries(fields)) {
    const setter = target[`set${pascal(key)}`]
    if (typeof setter !== 'function') throw new Error(`${where}.${key} is not a field of facebook-nodejs-business-sdk's ${target.constructor.name}`)
    setter.call(target, convert(key, value))
  }
  return target
}

function toSdkUserData(userData: Json): SdkObject {
  const target = new UserData() as SdkObject
  for (const [key, value] of Object.entries(userData)) {
    const setter = USER_DATA_SETTERS[key]
    if (!setter || typeof target[setter] !== 'function') throw new Error(`user_data.${key} is not a field of facebook-nodejs-business-sdk's UserData`)
    ;(target[setter] as (value: unknown) => void).call(target, value)
  }
  return target
}

function toSdkCustomData(customData: Json): SdkObject {
  const known = Object.fromEntries(Object.entries(customData).filter(([key]) => !DOCUMENTED_CUSTOM_PROPERTIES.has(key)))
  const extra = Object.fromEntries(Object.entries(customData).filter(([key]) => DOCUMENTED_CUSTOM_PROPERTIES.has(key)))
  const target = fill(new CustomData() as SdkObject, known, 'custom_data', (key, value) =>
    key === 'contents' ? (value as Json[]).map((content) => fill(new Content() as SdkObject, content, 'custom_data.contents[]')) : value)
  if (Object.keys(extra).length) (target.setCustomProperties as (value: Json) => void).call(target, extra)
  return target
}

/** One server event as Meta's SDK would build and serialise it. */
export function throughMetaSdk(serverEvent: Json): Json {
  const { user_data: userData, custom_data: customData, ...rest } = serverEvent
  const event = fill(new ServerEvent() as SdkObject, rest, 'data[]')
  if (userData) (event.setUserData as (value: unknown) => void).call(event, toSdkUserData(userData as Json))
  if (customData) (event.setCustomData as (value: unknown) => void).call(event, toSdkCustomData(customData as Json))
  return event.normalize()
}

/** What the parameter builder makes of `_fbc` and `_fbp` cookies and a query string, on a page of example.com. */
function builderIds(cookies: Record<string, string>, query: Record<string, string> = {}): { fbc: string | null, fbp: string | null } {
  const builder = new ParamBuilder(['example.com'])
  builder.processRequest('shop.example.com', query, cookies)
  return { fbc: builder.getFbc(), fbp: builder.getFbp() }
}

/**
 * The cookie value the builder kept, without the appendix it adds to a four-segment one; null where it dropped the
 * value (for `_fbp` it then makes a new browser id of its own, which is not the cookie's).
 */
const keptFromCookie = (input: string, output: string | null) => (output === input || output?.startsWith(`${input}.`) ? input : null)

/** Every TypeScript file that runs in production: the composition root, the kernel, plugins and adapters. */
function runtimeFiles(): string[] {
  const root = new URL('../../', import.meta.url)
  const files = ['core', 'plugins', 'adapters'].flatMap((folder) => (readdirSync(new URL(folder, root), { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts')).map((file) => `${folder}/${file}`))
  return ['dcgate.ts', ...files].map((file) => readFileSync(new URL(file, root), 'utf8'))
}

export function metaOracleTests(options: MetaOptions): void {
  it("meta: Meta's SDK and parameter builder are test oracles only: no run-time file imports them", () => {
    const files = runtimeFiles()
    expect(files.length).toBeGreaterThan(100)
    expect(files.filter((text) => /from ['"](capi-param-builder-nodejs|facebook-nodejs-business-sdk)['"]/.test(text))).toEqual([])
  })

  const userData = (event: ConversionEvent) => (JSON.parse(meta.toRequest([event], options).body) as { data: [{ user_data?: Json }] }).data[0].user_data ?? {}

  describe("meta: fbc and fbp as Meta's parameter builder passes them on (capi-param-builder-nodejs)", () => {
    const builderAppendix = builderIds({}).fbp!.split('.')[4]!
    const cookies = [
      'fb.1.1732780800000.IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgk',
      'fb.2.1732780800000.1398745621',
      'fb.0.1732780800000.1398745621.BA',
      `fb.1.1732780800000.IwAR0Lead7Qp.${builderAppendix}`,
      'fb.1.1732780800000.1398745621.ZZ',
      'fb.1.1732780800000.1398745621.AQAAAAAA',
      'fb.1.1732780800000.IwAR0.Lead.7Qp',
      'fb.1.1732780800000.',
      'fb.1.not-a-time.IwAR0Lead7Qp',
      'fb.x.1732780800000.IwAR0Lead7Qp',
      'FB.1.1732780800000.IwAR0Lead7Qp',
      'IwAR0Lead7Qp',
      'probe-fbc',
    ]

    it.each(cookies)('sends %s exactly when the builder keeps it, and as the browser had it', (cookie) => {
      const builder = builderIds({ _fbc: cookie, _fbp: cookie })
      const event = { ...purchaseFixture(), clickIds: { fbc: cookie, fbp: cookie } }
      for (const key of ['fbc', 'fbp'] as const) {
        const kept = keptFromCookie(cookie, builder[key])
        if (kept === null) expect(userData(event), `${key} the builder drops`).not.toHaveProperty(key)
        else expect(userData(event)[key], `${key} the builder keeps`).toBe(kept)
      }
    })

    it('an event whose only identifier is an fbc the builder would drop is skipped, not sent', () => {
      expect(meta.skipReason!({ ...nobodyFixture(), clickIds: { fbc: 'probe-fbc' } }, options)).toMatch(/no customer information/)
      expect(meta.skipReason!({ ...nobodyFixture(), clickIds: { fbc: 'fb.1.1732780800000.IwAR0Lead7Qp' } }, options)).toBeUndefined()
    })

    describe('an fbclid dcgate turns into fbc', () => {
      afterEach(() => vi.useRealTimers())
      it('is the builder\'s fbc for the same click at the same moment, on a site at example.com', () => {
        vi.useFakeTimers({ toFake: ['Date'] })
        vi.setSystemTime(new Date(Date.now()))
        const fbclid = 'IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgk'
        const ours = givenClickIds({ fbclid }).fbc!
        const theirs = builderIds({}, { fbclid }).fbc!
        expect(theirs.split('.')).toHaveLength(5)
        expect(ours).toBe(theirs.split('.').slice(0, 4).join('.'))
        expect(userData({ ...purchaseFixture(), clickIds: { fbc: ours } }).fbc).toBe(ours)
      })
    })
  })

  describe("meta: every server event round-trips through Meta's business SDK (facebook-nodejs-business-sdk)", () => {
    const now = new Date()
    const late: ConversionEvent = { ...leadFixture(now), qualifiedLate: { leadAt: new Date(now.getTime() - 10 * 86_400_000) }, clickIds: { fb_lead_id: '1234567890123456' } }
    const events: [string, ConversionEvent][] = [
      ...fixtureEvents(now).map((event): [string, ConversionEvent] => [event.standardEvent, event]),
      ['a BOPIS purchase', { ...purchaseFixture(now), channel: 'bopis' }],
      ['an in-store purchase', { ...purchaseFixture(now), channel: 'in_store' }],
      ['a lead under Limited Data Use in California, ads personalization denied', { ...leadFixture(now), limitedDataUse: { country: 'us', state: 'ca' }, consent: { adUserData: 'granted', adPersonalization: 'denied' } }],
      ['a lead qualified in a CRM after 7 days (Conversion Leads)', late],
    ]

    it.each(events)('%s: the SDK serialises the same event, field for field', (_name, event) => {
      const body = JSON.parse(meta.toRequest([event], options).body) as { data: Json[] }
      for (const sent of body.data) expect(throughMetaSdk(sent)).toEqual(sent)
    })

    it('the Conversion Leads event carries lead_id and the CRM fields, so the round trip covers them', () => {
      const sent = (JSON.parse(meta.toRequest([late], options).body) as { data: Json[] }).data[0]!
      expect(sent).toMatchObject({ user_data: { lead_id: '1234567890123456' }, custom_data: { event_source: 'crm', lead_event_source: 'dcgate' } })
      expect(throughMetaSdk(sent)).toEqual(sent)
    })

    it('a field the SDK does not know fails the round trip', () => {
      const sent = (JSON.parse(meta.toRequest([purchaseFixture(now)], options).body) as { data: Json[] }).data[0]!
      expect(() => throughMetaSdk({ ...sent, event_category: 'checkout' })).toThrow(/data\[\]\.event_category is not a field/)
      expect(() => throughMetaSdk({ ...sent, user_data: { ...(sent.user_data as Json), email: 'x' } })).toThrow(/user_data\.email is not a field/)
      expect(() => throughMetaSdk({ ...sent, custom_data: { ...(sent.custom_data as Json), revenue: 1 } })).toThrow(/custom_data\.revenue is not a field/)
    })
  })
}
