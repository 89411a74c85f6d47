import { GppModel } from '@iabgpp/cmpapi'
import { describe, expect, it } from 'vitest'
import { fromGppString } from '../../core/consent/gpp.ts'
import { applyConsent, fromConsentMode } from '../../core/consent/purposes.ts'
import { ConsentStringError, readConsent } from '../../core/consent/read.ts'
import { fromTcString } from '../../core/consent/tcf.ts'
import { decideDelivery } from '../../core/delivery/decide.ts'
import { toEvent, type EventFields } from '../../core/delivery/rows.ts'
import { toIngestEvent } from '../../adapters/ads/google-ads/map.ts'
import { facts } from '../delivery/decide-facts.ts'
import { tcString } from './tcf-fixtures.ts'

// Issue 27: consent per purpose, from whichever tool asked, decided per destination.
const row = (consent: EventFields['consent_purposes'], choice: EventFields['consent'] = 'unknown'): EventFields => ({
  site_id: 's', message_id: 'm-1', trust: 'trusted', event: 'Purchase', standard_event: 'Purchase', occurred_at: new Date(), value: 10, currency: 'EUR',
  order_id: null, channel: 'online', items: [], identity: {}, click_ids: { gclid: 'g-1' }, ip: null, user_agent: null, page_url: null,
  consent: choice, confirmation: 'tracked', consent_purposes: consent,
})

describe('TCF: the IAB purposes and Google\'s vendor id', () => {
  it('purposes 1, 3, 4 and 7 with every mapped vendor\'s consent grant every purpose', () => {
    expect(fromTcString(tcString([1, 3, 4, 7], [755, 804, 1126]))).toEqual({ source: 'tcf', measurement: 'granted', advertising: 'granted', ad_user_data: 'granted', ad_personalization: 'granted' })
  })

  it('LinkedIn (804) and Microsoft Advertising (1126) need their own vendor consent, as Google (755) does', () => {
    expect(fromTcString(tcString([1, 3, 4, 7], [755])).vendors_denied).toEqual(['linkedin', 'microsoft_ads'])
    expect(fromTcString(tcString([1, 3, 4, 7], [804, 1126])).vendors_denied).toEqual(['google_ads'])
  })

  it('purpose 1 refused: nothing is granted that needs the device, so no measurement and no advertising', () => {
    expect(fromTcString(tcString([3, 4, 7], [755]))).toMatchObject({ measurement: 'denied', advertising: 'denied', ad_user_data: 'denied' })
  })

  it('purposes 3 or 4 refused: advertising without ad personalization', () => {
    expect(fromTcString(tcString([1, 7], [755]))).toMatchObject({ advertising: 'granted', ad_user_data: 'granted', ad_personalization: 'denied' })
  })

  it('Google without vendor consent is named as refused', () => {
    expect(fromTcString(tcString([1, 3, 4, 7], [1000])).vendors_denied).toEqual(['google_ads', 'linkedin', 'microsoft_ads'])
  })

  it('an unreadable string is refused naming its field', () => {
    expect(() => readConsent({ tcString: 'not-a-tc-string' }, 'tcf')).toThrow(ConsentStringError)
  })
})

describe('GPP: US sections\' opt-outs', () => {
  it('an opt-out of sale in the national section is a US opt-out; none is none', () => {
    const out = new GppModel()
    out.setFieldValue('usnat', 'SaleOptOut', 1)
    const stays = new GppModel()
    stays.setFieldValue('usca', 'SaleOptOut', 2)
    expect(fromGppString(out.encode())).toEqual({ source: 'gpp', us_opt_out: true })
    expect(fromGppString(stays.encode())).toEqual({ source: 'gpp', us_opt_out: false })
  })
})

describe('which consent applies', () => {
  const granted = fromConsentMode({ ad_storage: 'granted', analytics_storage: 'granted', ad_user_data: 'granted', ad_personalization: 'granted' })
  it('the conversion\'s own, then the visit\'s purposes, then the visit\'s one-bit choice, else none', () => {
    const visit = fromConsentMode({ ad_storage: 'denied' })
    expect(applyConsent(granted, visit, 'denied')).toEqual({ rule: 'conversion', purposes: granted })
    expect(applyConsent(undefined, visit, 'granted')).toEqual({ rule: 'visit', purposes: visit })
    expect(applyConsent(undefined, undefined, 'denied')).toMatchObject({ rule: 'visit-choice', purposes: { advertising: 'denied' } })
    expect(applyConsent(undefined, undefined, 'unknown')).toEqual({ rule: 'none' })
  })

  it('a conversion granting consent is sent though a visit said no', () => {
    const plan = decideDelivery(facts({ match: { isBot: false, consent: 'denied' }, consent: applyConsent(granted, undefined, 'denied') }))
    expect(plan).toMatchObject({ sendable: true, skipReason: undefined, consent: { rule: 'conversion' } })
  })
})

describe('per destination', () => {
  it('analytics only: the conversion reaches no ad platform, and says why', () => {
    const visit = fromConsentMode({ analytics_storage: 'granted', ad_storage: 'denied' })
    const plan = decideDelivery(facts({ match: { isBot: false, consent: 'granted' }, consent: applyConsent(undefined, visit, 'granted') }))
    expect(plan.sendable).toBe(false)
    expect(plan.skipReason).toBe('consent (consent-mode, the matched visit) allows measurement but not advertising')
  })

  it('advertising without ad personalization reaches Google with adPersonalization denied and ad user data granted', () => {
    const consent = applyConsent(fromTcString(tcString([1, 7], [755])), undefined, 'unknown')
    expect(decideDelivery(facts({ consent })).sendable).toBe(true)
    const event = toEvent(row(consent))
    expect(toIngestEvent(event, { customerId: '1234567890', conversionActions: { Purchase: '42' } } as never).consent).toEqual({ adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_DENIED' })
  })

  it('Consent Mode ad_user_data denied reaches Google as adUserData denied', () => {
    const consent = applyConsent(fromConsentMode({ ad_storage: 'granted', analytics_storage: 'granted', ad_user_data: 'denied', ad_personalization: 'granted' }), undefined, 'unknown')
    const event = toEvent(row(consent))
    expect(event.consent).toEqual({ adUserData: 'denied', adPersonalization: 'granted' })
    expect(toIngestEvent(event, { customerId: '1234567890', conversionActions: { Purchase: '42' } } as never).consent).toEqual({ adUserData: 'CONSENT_DENIED', adPersonalization: 'CONSENT_GRANTED' })
  })

  it('a platform refused as a TCF vendor is named for the outbox to skip', () => {
    const consent = applyConsent(fromTcString(tcString([1, 3, 4, 7], [1000])), undefined, 'unknown')
    expect(toEvent(row(consent)).consent.vendorsDenied).toEqual(['google_ads', 'linkedin', 'microsoft_ads'])
  })
})
