/**
 * The conversion request body (spec: "Conversion request"), shared by POST /api/v1/conversions/automation (the intake
 * plugin) and the Zapier, Make and n8n webhook sources (adapters/sources/automation): in core, so neither imports
 * the other.
 */
import * as v from 'valibot'
import { AC_NEEDS_TC, CheckedConsentFields, readConsent } from '../consent/read.ts'
import type { UsPrivacyInput } from '../delivery/decide.ts'
import type { ConversionInput } from '../delivery/types.ts'
import { canonicalEmail, EMAIL_MESSAGE, MAX_EMAIL_LENGTH } from '../identity/email.ts'
import { isSha256Hex } from '../identity/hash.ts'

const Text = (max = 1000) => v.pipe(v.string(), v.trim(), v.maxLength(max))

/**
 * A trait email: one mailbox by the strict syntax every email input shares (core/identity/email.ts), or its SHA-256
 * already made; an empty string means none. Anything else is refused, naming the field, like any invalid field.
 */
const TraitEmail = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.maxLength(MAX_EMAIL_LENGTH, `must be at most ${MAX_EMAIL_LENGTH} characters`),
  v.check((text) => text === '' || isSha256Hex(text) || canonicalEmail(text) !== undefined, `${EMAIL_MESSAGE}, or its SHA-256 in hex`),
)
const Money = v.pipe(v.union([v.number(), v.pipe(v.string(), v.trim(), v.regex(/^-?\d+(\.\d+)?$/, 'must be a number'), v.transform(Number))], 'must be a number'), v.finite())

/** ISO 8601 string, unix seconds or unix milliseconds (numbers below 10^11 are read as seconds). */
const Timestamp = v.pipe(
  v.union([
    v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 timestamp'), v.check(isCalendarDate, 'must be a real date')),
    v.pipe(v.number(), v.integer(), v.minValue(0)),
  ], 'must be an ISO 8601 string or unix seconds or milliseconds'),
  v.transform((value) => new Date(typeof value === 'number' ? (value < 1e11 ? value * 1000 : value) : value)),
  // A well-formed value can still be no date: beyond JavaScript's range, or a day the month does not have.
  v.check((date) => !Number.isNaN(date.getTime()), 'must be a real date'),
)

/** The timestamp's day exists (Date would read 2026-02-30 as March 2). */
function isCalendarDate(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

const Item = v.looseObject({
  sku: v.optional(Text(255)),
  product_id: v.optional(Text(255)),
  name: v.optional(Text(500)),
  category: v.optional(Text(255)),
  brand: v.optional(Text(255)),
  quantity: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  price: v.optional(Money),
  currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z]{3}$/, 'must be a 3-letter currency code'), v.toUpperCase())),
})

/** POST /api/v1/conversions/automation body (spec: "Conversion request"). Unknown fields are ignored. */
export const ConversionRequest = v.looseObject({
  event: v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(255)),
  messageId: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(255))),
  timestamp: v.optional(Timestamp),
  userId: v.optional(Text(255)),
  anonymousId: v.optional(Text(255)),
  properties: v.optional(v.looseObject({
    value: v.optional(Money),
    currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z]{3}$/, 'must be a 3-letter currency code'), v.toUpperCase())),
    // Lengths here and below are the columns' (conversions.order_id, user_id, session_id, held_email): longer was a 500.
    order_id: v.optional(v.pipe(v.union([v.string(), v.number()], 'must be a string'), v.transform(String), v.maxLength(255))),
    items: v.optional(v.pipe(v.array(Item), v.maxLength(500))),
    channel: v.optional(v.picklist(['online', 'in_store', 'phone', 'bopis'])),
    content_name: v.optional(Text(500)),
    content_category: v.optional(Text(255)),
  })),
  context: v.optional(v.looseObject({
    traits: v.optional(v.looseObject({
      email: v.optional(TraitEmail), phone: v.optional(Text(64)), first_name: v.optional(Text(255)), last_name: v.optional(Text(255)),
      street: v.optional(Text(500)), postal_code: v.optional(Text(32)), city: v.optional(Text(255)), state: v.optional(Text(255)), country: v.optional(Text(64)),
      company: v.optional(Text(255)), title: v.optional(Text(255)),
    })),
    identifiers: v.optional(v.objectWithRest({
      dc_session_id: v.optional(v.pipe(v.string('must be a string'), v.maxLength(128))),
      customer_id: v.optional(v.pipe(v.string('must be a string'), v.maxLength(255))),
    }, v.pipe(v.string('must be a string'), v.maxLength(2048)))),
    // 45: the longest address written out; an IPv6 zone (fe80::1%eth0) may be any length and fits no column.
    ip: v.optional(v.pipe(v.string(), v.maxLength(45, 'must be an IPv4 or IPv6 address'), v.ip('must be an IPv4 or IPv6 address'))),
    userAgent: v.optional(Text(2048)),
    page: v.optional(v.looseObject({ url: v.optional(Text(4096)) })),
    // The person's choices. Other keys (Segment's categoryPreferences) are accepted and ignored.
    consent: v.optional(v.pipe(v.looseObject({
      /** The person opted out of the sale or sharing of their data, or of targeted advertising, under a US state law. */
      usPrivacyOptOut: v.optional(v.boolean('must be true or false')),
      /** The buyer's browser sent Global Privacy Control (`Sec-GPC: 1`, navigator.globalPrivacyControl). */
      gpc: v.optional(v.boolean('must be true or false')),
      // The visitor's choice as the site's consent tool recorded it: a TC string, a GPP string, or Consent Mode's signals.
      ...CheckedConsentFields,
      // Google's Additional Consent under the name it has down the ad chain (https://support.google.com/admanager/answer/9681920).
      addtl_consent: CheckedConsentFields.addtlConsent,
    }, 'must be an object'),
    // An Additional Consent string given without the TC string it extends is refused, naming the field it came in.
    v.forward(v.partialCheck([['addtlConsent'], ['tcString']], (c) => !c.addtlConsent || !!c.tcString, AC_NEEDS_TC), ['addtlConsent']),
    v.forward(v.partialCheck([['addtl_consent'], ['tcString']], (c) => !c.addtl_consent || !!c.tcString, AC_NEEDS_TC), ['addtl_consent']))),
  })),
})
export type ConversionRequestOutput = v.InferOutput<typeof ConversionRequest>

/** The validated request body in the pipeline's terms (with the US opt-out core/delivery/decide.ts reads). */
export function toConversionInput(body: ConversionRequestOutput): ConversionInput & UsPrivacyInput {
  const properties = body.properties ?? {}
  const context = body.context ?? {}
  const consent = context.consent ?? {}
  return {
    messageId: body.messageId,
    event: body.event,
    occurredAt: body.timestamp,
    userId: body.userId,
    anonymousId: body.anonymousId,
    value: properties.value,
    currency: properties.currency,
    orderId: properties.order_id,
    items: properties.items,
    channel: properties.channel,
    traits: context.traits,
    identifiers: context.identifiers,
    ip: context.ip,
    userAgent: context.userAgent,
    pageUrl: context.page?.url,
    contentName: properties.content_name,
    contentCategory: properties.content_category,
    usOptOut: consent.usPrivacyOptOut === true ? 'opt_out' : consent.gpc === true ? 'gpc' : undefined,
    // The strings were checked readable by the schema.
    consent: readConsent({ ...consent, addtlConsent: consent.addtlConsent ?? consent.addtl_consent }, consent.tcString ? 'tcf' : consent.gppString ? 'gpp' : 'consent-mode'),
  }
}
