/**
 * A made-up conversion of a site, for the dashboard's Setup page: `planSample` carries every identifier a platform may
 * need (so only the configuration decides what the plan shows); `sampleEvent` is what "Send test event" sends in the
 * platform's test mode: the same without Google's click ids, which Google decodes and would refuse as made up (the
 * hashed email is enough for it). Neither is ever stored.
 */
import type { SiteConfig } from '../config/schema.ts'
import { hashIdentity } from '../identity/hash.ts'
import type { ConversionEvent, StandardEvent } from './types.ts'

/** The documentation address block (RFC 5737) and a reserved example domain: nobody's data. */
const TEST_PERSON = { email: 'test@example.com', phone: '+12025550123', first_name: 'Test', last_name: 'Person', postal_code: '20500', country: 'US' }

export function sampleEvent(siteId: string, site: Pick<SiteConfig, 'domains'>, standardEvent: StandardEvent, messageId: string, now = new Date()): ConversionEvent {
  const host = site.domains[0] ?? 'example.com'
  return {
    messageId,
    siteId,
    event: standardEvent,
    standardEvent,
    occurredAt: new Date(now.getTime() - 60_000),
    value: 1,
    currency: 'USD',
    orderId: messageId,
    items: [],
    channel: 'online',
    identity: hashIdentity(TEST_PERSON),
    clickIds: TEST_CLICK_IDS,
    ip: '192.0.2.1',
    userAgent: 'Mozilla/5.0 (dcgate test event)',
    pageUrl: `https://${host}/`,
    clear: { postalCode: TEST_PERSON.postal_code, countryCode: TEST_PERSON.country, firstName: TEST_PERSON.first_name, lastName: TEST_PERSON.last_name },
    consent: { adUserData: 'granted', adPersonalization: 'granted' },
    confirmation: 'tracked',
  }
}

/** Every click id a platform reads but Google's, well formed (a GA4 client id, a Meta fbc…). */
const TEST_CLICK_IDS = {
  fbc: `fb.1.1700000000000.test`, fbp: 'fb.1.1700000000000.1234567890', ttclid: 'E.C.P.test', li_fat_id: 'test-li-fat-id',
  msclkid: 'test-msclkid', uetvid: 'test-uetvid', ga: '1234567890.1700000000', ga_session: 'G-TEST.1700000000', rdt_cid: 'test-rdt-cid',
  epik: 'test-epik', twclid: 'test-twclid', ScCid: 'test-sccid', scid: 'test-scid',
}
/** And Google's, so that a plan row is decided by the configuration alone. */
const EVERY_CLICK_ID = { ...TEST_CLICK_IDS, gclid: 'Cj0KCQiA-test' }

export function planSample(siteId: string, site: Pick<SiteConfig, 'domains'>, standardEvent: StandardEvent, now = new Date()): ConversionEvent {
  return { ...sampleEvent(siteId, site, standardEvent, 'setup-plan', now), clickIds: EVERY_CLICK_ID }
}
