/**
 * Pure mapping: our conversions → one `POST /rest/conversionEvents` call with `X-RestLi-Method: BATCH_CREATE` and a
 * body `{ elements: [...] }`, one element per conversion. Personal data arrives hashed (core/identity); this file
 * only places it under LinkedIn's keys. Decisions and sources: README.md.
 */
import type { ConversionEvent, PlatformRequest, StandardEvent } from '../../../core/delivery/types.ts'
import { sha256Hex } from '../../../core/identity/hash.ts'
import { isSha256Hex } from '../../shared/helpers.ts'
import type { LinkedInOptions } from './index.ts'
import { LINKEDIN_API_VERSION } from './version.ts'

export type LinkedInIdType = 'SHA256_EMAIL' | 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID'

export interface ConversionEventElement {
  conversion: string
  /** Epoch milliseconds. */
  conversionHappenedAt: number
  conversionValue?: { currencyCode: string, amount: string }
  eventId: string
  /** `userIds` is required even when empty; `userInfo` (plain text) only with both names (README "userInfo"). */
  user: { userIds: { idType: LinkedInIdType, idValue: string }[], userInfo?: UserInfo, externalIds?: string[] }
}

/** LinkedIn's userInfo: in plain text, firstName and lastName required when it is sent. */
export interface UserInfo { firstName: string, lastName: string, companyName?: string, title?: string, countryCode?: string }

export interface BatchCreateBody { elements: ConversionEventElement[] }

const RULE_URN = 'urn:lla:llaPartnerConversion:'
const CURRENCY = /^[A-Z]{3}$/
/** LinkedIn keeps eventId to 64 characters (Salesforce's connector reference; README "Decisions"). */
const MAX_EVENT_ID_LENGTH = 64

export function toConversionEventsRequest(events: readonly ConversionEvent[], options: LinkedInOptions): PlatformRequest {
  const body: BatchCreateBody = { elements: events.map((event) => toElement(event, options)) }
  return {
    url: `${options.baseUrl}/rest/conversionEvents`,
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'LinkedIn-Version': LINKEDIN_API_VERSION,
      'X-Restli-Protocol-Version': '2.0.0',
      'X-RestLi-Method': 'BATCH_CREATE',
    },
    body: JSON.stringify(body),
  }
}

export function toElement(event: ConversionEvent, options: LinkedInOptions): ConversionEventElement {
  // skipReason refuses a standard event without a conversion rule, so there is one.
  const ruleId = ruleFor(event.standardEvent, options)!
  const externalId = event.identity.externalId
  const amount = toAmount(event.value)
  return {
    // Test mode sends every event to the test rule; which events are sent still follows the mapping.
    conversion: `${RULE_URN}${options.testConversionRule ?? ruleId}`,
    conversionHappenedAt: event.occurredAt.getTime(),
    // LinkedIn needs a currency with an amount; a value without one is left out, the event still goes.
    ...(amount !== undefined && event.currency && CURRENCY.test(event.currency) ? { conversionValue: { currencyCode: event.currency, amount } } : {}),
    eventId: toEventId(event.messageId),
    user: {
      userIds: toUserIds(event),
      ...toUserInfo(event),
      // An opaque id LinkedIn ties to the member it matched; the digest stands in for the integrator's id.
      ...(isSha256Hex(externalId) ? { externalIds: [externalId] } : {}),
    },
  }
}

/** Why LinkedIn will not take this event (no rule for it, consent, nothing to match it by), or undefined when it will. */
export function skipReason(event: ConversionEvent, options: LinkedInOptions): string | undefined {
  if (!ruleFor(event.standardEvent, options)) return `no LinkedIn conversion rule is configured for ${event.standardEvent}`
  if (event.consent.adUserData === 'denied') {
    return 'the visitor denied ad user data, and LinkedIn\'s Conversions API has no consent signal to pass it on'
  }
  if (toUserIds(event).length === 0) return 'no hashed email or li_fat_id (LinkedIn first-party ad tracking id) for LinkedIn to match'
  return undefined
}

/** The buyer's names, company, title and country in clear, kept for LinkedIn only while the delivery may need them. */
function toUserInfo({ clear }: ConversionEvent): { userInfo: UserInfo } | Record<string, never> {
  if (!clear?.firstName || !clear.lastName) return {}
  return {
    userInfo: {
      firstName: clear.firstName, lastName: clear.lastName,
      ...(clear.company ? { companyName: clear.company } : {}), ...(clear.title ? { title: clear.title } : {}),
      ...(clear.countryCode ? { countryCode: clear.countryCode } : {}),
    },
  }
}

/** The messageId, or its SHA-256 when it is longer than LinkedIn's eventId allows: stable, so retries still dedupe. */
export function toEventId(messageId: string): string {
  return messageId.length <= MAX_EVENT_ID_LENGTH ? messageId : sha256Hex(messageId)
}

/** A decimal string ("129.85"), rounded to six places to drop binary noise; negative or non-finite values are not sent. */
export function toAmount(value: number | undefined): string | undefined {
  if (value === undefined || !Number.isFinite(value) || value < 0) return undefined
  return String(Math.round(value * 1e6) / 1e6)
}

function ruleFor(standardEvent: StandardEvent, options: LinkedInOptions): string | undefined {
  return options.conversionRules[standardEvent]
}

/** SHA256_EMAIL is the trimmed, lowercased address (identity.email); li_fat_id goes as received, never hashed. */
function toUserIds(event: ConversionEvent): ConversionEventElement['user']['userIds'] {
  const userIds: ConversionEventElement['user']['userIds'] = []
  const { email } = event.identity
  if (isSha256Hex(email)) userIds.push({ idType: 'SHA256_EMAIL', idValue: email })
  const liFatId = event.clickIds.li_fat_id?.trim()
  if (liFatId) userIds.push({ idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: liFatId })
  return userIds
}
