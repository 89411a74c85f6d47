/**
 * Conversions every ad adapter is checked with. Identity is hashed here with node:crypto, following the
 * normalisation documented on HashedIdentity, so these fixtures do not depend on core/identity. The plain
 * strings are exported so the contract can prove none of them reaches a platform.
 */
import { createHash } from 'node:crypto'
import type { ConversionEvent, HashedIdentity } from '../../core/delivery/types.ts'

/** The clock the contract's snapshots are taken at. */
export const FIXED_NOW = new Date('2026-03-02T10:00:00.000Z')

/** One buyer's personal data as an integrator sends it, before normalisation. */
export const PERSON = {
  email: ' Marguerite.Okonkwo@GMail.com ',
  phone: '+44 20 7946 0958',
  firstName: 'Marguerite',
  lastName: 'Okonkwo-Lindqvist',
  city: 'Menlo Park',
  state: 'CA',
  zip: '94025-1234',
  country: 'US',
  externalId: 'CRM-User-8812',
  company: 'Fjordline Analytics',
  jobTitle: 'Procurement Lead',
} as const

export type PlainPiiField = keyof typeof PLAIN_PII

/**
 * Every plain form of PERSON that must never appear in a request (raw, normalised, reformatted). State and
 * country are left out: two letters occur in any text.
 */
export const PLAIN_PII = {
  email: [PERSON.email.trim(), 'marguerite.okonkwo@gmail.com', 'margueriteokonkwo@gmail.com', 'Marguerite.Okonkwo%40'],
  phone: ['+442079460958', '442079460958', '02079460958', '20 7946 0958', '2079460958'],
  firstName: [PERSON.firstName],
  lastName: [PERSON.lastName, 'okonkwolindqvist', 'Okonkwo'],
  city: [PERSON.city, 'menlopark'],
  zip: [PERSON.zip, '94025'],
  externalId: [PERSON.externalId, 'crm-user-8812'],
  company: [PERSON.company],
  title: [PERSON.jobTitle],
} as const satisfies Record<string, readonly string[]>

/** PERSON normalised as HashedIdentity documents, then SHA-256 (lowercase hex). */
export const HASHED_PERSON: Required<HashedIdentity> = {
  email: sha256('marguerite.okonkwo@gmail.com'),
  emailGoogle: sha256('margueriteokonkwo@gmail.com'),
  emailMicrosoft: sha256('margueriteokonkwo@gmail.com'),
  emailReddit: sha256('margueriteokonkwo@gmail.com'),
  phoneE164: sha256('+442079460958'),
  phoneDigits: sha256('442079460958'),
  firstName: sha256('marguerite'),
  lastName: sha256('okonkwolindqvist'),
  city: sha256('menlopark'),
  state: sha256('ca'),
  zip: sha256('94025'),
  country: sha256('us'),
  externalId: sha256('crm-user-8812'),
}

export const USER_AGENT = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15'

/** A paid order with value, items, the full hashed identity, click ids, IP and browser. */
export function purchaseFixture(now: Date = FIXED_NOW): ConversionEvent {
  const clickedAt = now.getTime() - 26 * 3_600_000
  return {
    messageId: 'msg-purchase-0001',
    siteId: 'demo',
    event: 'order_completed',
    standardEvent: 'Purchase',
    occurredAt: new Date(now.getTime() - 2 * 3_600_000),
    value: 129.85,
    currency: 'EUR',
    orderId: 'A-1001',
    items: [
      { sku: 'SHIRT-RED-M', product_id: 'P-100', name: 'Red shirt', category: 'Shirts', brand: 'Acme', quantity: 2, price: 39.95, currency: 'EUR' },
      { sku: 'CAP-BLK', product_id: 'P-200', name: 'Black cap', quantity: 1, price: 49.95, currency: 'EUR' },
    ],
    channel: 'online',
    identity: { ...HASHED_PERSON },
    clickIds: {
      gclid: 'Cj0KCQiA5fetBhC9ARIsAP1UMgH0',
      fbc: `fb.1.${clickedAt}.IwAR2xTq9ZlK8mVb3nQ`,
      fbp: `fb.1.${clickedAt - 86_400_000}.1398745621`,
    },
    ip: '203.0.113.7',
    userAgent: USER_AGENT,
    pageUrl: 'https://shop.example.com/checkout/thank-you',
    // What a platform that declares clearTraits gets in clear (LinkedIn's userInfo, Google's address); the others never read it.
    clear: { firstName: PERSON.firstName, lastName: PERSON.lastName, company: PERSON.company, title: PERSON.jobTitle, postalCode: PERSON.zip, countryCode: PERSON.country },
    consent: { adUserData: 'granted', adPersonalization: 'granted' },
    confirmation: 'payment_confirmed',
  }
}

/** A form lead with only a hashed email and the click ids it came with. */
export function leadFixture(now: Date = FIXED_NOW): ConversionEvent {
  return {
    messageId: 'msg-lead-0001',
    siteId: 'demo',
    event: 'demo_request',
    standardEvent: 'Lead',
    occurredAt: new Date(now.getTime() - 30 * 60_000),
    items: [],
    channel: 'online',
    identity: { email: HASHED_PERSON.email, emailGoogle: HASHED_PERSON.emailGoogle, emailMicrosoft: HASHED_PERSON.emailMicrosoft, emailReddit: HASHED_PERSON.emailReddit },
    clickIds: { gclid: 'EAIaIQobChMI8ZqL', fbc: `fb.1.${now.getTime() - 3_600_000}.IwAR0Lead7Qp` },
    consent: { adUserData: 'granted', adPersonalization: 'granted' },
    confirmation: 'crm_qualified',
  }
}

/** A sign-up with the least an event can carry: its ids, a time and a hashed email. */
export function registrationFixture(now: Date = FIXED_NOW): ConversionEvent {
  return {
    messageId: 'msg-signup-0001',
    siteId: 'demo',
    event: 'signup',
    standardEvent: 'CompleteRegistration',
    occurredAt: new Date(now.getTime() - 60_000),
    items: [],
    channel: 'online',
    identity: { email: HASHED_PERSON.email, emailGoogle: HASHED_PERSON.emailGoogle, emailMicrosoft: HASHED_PERSON.emailMicrosoft, emailReddit: HASHED_PERSON.emailReddit },
    clickIds: {},
    consent: { adUserData: 'unknown', adPersonalization: 'unknown' },
    confirmation: 'tracked',
  }
}

/** The three fixtures, in a fixed order. */
export function fixtureEvents(now: Date = FIXED_NOW): ConversionEvent[] {
  return [purchaseFixture(now), leadFixture(now), registrationFixture(now)]
}

/** `size` distinct purchases (own messageId and orderId), for batch-size checks. */
export function batchOf(size: number, now: Date = FIXED_NOW): ConversionEvent[] {
  const base = purchaseFixture(now)
  return Array.from({ length: size }, (_, index) => ({
    ...base,
    messageId: `msg-batch-${String(index).padStart(4, '0')}`,
    orderId: `B-${index}`,
    occurredAt: new Date(base.occurredAt.getTime() - index * 1000),
  }))
}

/** A purchase carrying nothing to match a person by: no identity, click id, IP address or user agent. */
export function nobodyFixture(now: Date = FIXED_NOW): ConversionEvent {
  const { ip: _ip, userAgent: _userAgent, ...purchase } = purchaseFixture(now)
  return { ...purchase, messageId: 'msg-nobody-0001', identity: {}, clickIds: {} }
}

/**
 * Events on both sides of where a platform's skipReason draws its line: each standard event, consent denied, and
 * each identifier alone (a click id, a hashed email, phone or external id, IP address with user agent) or none.
 */
export function probeEvents(now: Date = FIXED_NOW): ConversionEvent[] {
  const nobody = nobodyFixture(now)
  const denied = { adUserData: 'denied', adPersonalization: 'denied' } as const
  const clickIds = ['gclid', 'gbraid', 'wbraid', 'fbc', 'fbp', 'ttclid', 'li_fat_id', 'msclkid', 'rdt_cid', 'epik', 'twclid'] as const
  const events: ConversionEvent[] = [
    ...STANDARD.map((standardEvent) => ({ ...purchaseFixture(now), standardEvent })),
    { ...purchaseFixture(now), consent: denied },
    { ...leadFixture(now), consent: denied },
    nobody,
    { ...nobody, consent: denied },
    { ...nobody, identity: leadFixture(now).identity },
    { ...nobody, identity: { phoneE164: HASHED_PERSON.phoneE164, phoneDigits: HASHED_PERSON.phoneDigits } },
    { ...nobody, identity: { externalId: HASHED_PERSON.externalId } },
    { ...nobody, ip: '203.0.113.7', userAgent: USER_AGENT },
    ...clickIds.map((name) => ({ ...nobody, clickIds: { [name]: `probe-${name}` } })),
  ]
  return events.map((event, index) => ({ ...event, messageId: `msg-probe-${String(index).padStart(2, '0')}` }))
}

const STANDARD = ['Purchase', 'Lead', 'CompleteRegistration', 'Schedule'] as const

export function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex')
}
