import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAllPlatforms, type AllPlatforms } from '../fakes/all-platforms.ts'
import type { RecordedConversion } from '../fakes/google-ads.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { basicAuth, SHOP_EVENTS } from '../segment/support.ts'
import { tcString } from './tcf-fixtures.ts'

// Issue 27: a server conversion carries the visitor's consent (TC string, GPP string, Consent Mode's four signals) in
// context.consent on the automation and Segment routes; without one, a matched visit's stored consent applies; the
// answer and the delivery report say which rule decided.
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
let platforms: AllPlatforms
let app: TestApp
let key: string

beforeAll(async () => {
  platforms = await startAllPlatforms()
  app = await bootTestApp({
    plugins: ['intake', 'capture', 'segment'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    delivery: { publicGraceSeconds: 0 },
    sites: [{ id: 'shop', name: 'Shop', events: SHOP_EVENTS, consent: { banner: 'off' as const }, destinations: platforms.destinations }],
  })
  key = await app.createKey('shop')
})
afterAll(async () => {
  await app?.close()
  await platforms?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const report = async (messageId: string) => {
  const body = await (await app.admin('GET', '/sites/shop/deliveries')).json() as { deliveries: Record<string, unknown>[] }
  return Object.fromEntries(body.deliveries.filter((d) => d.message_id === messageId).map((d) => [d.provider, d]))
}
/** The consent of the Data Manager event Google recorded for this conversion. */
const googleConsent = (messageId: string) => (platforms.accepted('google_ads') as RecordedConversion[]).find((c) => JSON.stringify(c).includes(`"${messageId}"`))?.event?.consent

async function convert(messageId: string, context: Record<string, unknown>) {
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({ event: 'Purchase', messageId, properties: { value: 20, currency: 'EUR' }, context: { ip: '81.2.69.142', userAgent: CHROME, traits: { email: `${messageId}@example.com` }, identifiers: { gclid: `g-${messageId}`, li_fat_id: `li-${messageId}` }, ...context } }),
  })
  return { status: response.status, body: await response.json() as { events?: { message: string, errors?: { provider: string, message: string }[] }[], error?: { details?: unknown }, message?: string } }
}

describe('context.consent on the automation route', () => {
  it('a TC string granting purposes 1, 3, 4 and 7 with Google\'s vendor consent reaches Google with consent granted', async () => {
    const { status } = await convert('tcf-1', { consent: { tcString: tcString([1, 3, 4, 7], [755]) } })
    expect(status).toBe(202)
    expect(googleConsent('tcf-1')).toEqual({ adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_GRANTED' })
    expect((await report('tcf-1')).google_ads).toMatchObject({ status: 'sent', consent_rule: 'conversion', consent_purposes: { source: 'tcf', ad_user_data: 'granted', ad_personalization: 'granted' } })
  })

  it('a TC string without Google\'s vendor consent skips Google, naming why, and sends to the others', async () => {
    await convert('tcf-2', { consent: { tcString: tcString([1, 3, 4, 7], [1000]) } })
    const rows = await report('tcf-2')
    expect(rows.google_ads).toMatchObject({ status: 'skipped', error: 'the visitor\'s TC string gives google_ads no vendor consent' })
    expect(rows.meta).toMatchObject({ status: 'sent' })
  })

  it('a TC string refusing purpose 1 reaches no ad platform', async () => {
    const { body } = await convert('tcf-3', { consent: { tcString: tcString([3, 4, 7], [755]) } })
    expect(body.events![0]!.message).toBe('not sent: the visitor denied consent (tcf, the conversion\'s context.consent)')
    expect(platforms.acceptedBy('tcf-3')).toEqual([])
  })

  it('Consent Mode ad_user_data denied: Google gets adUserData denied, LinkedIn (no consent signal) gets nothing', async () => {
    await convert('cm-1', { consent: { ad_storage: 'granted', analytics_storage: 'granted', ad_user_data: 'denied', ad_personalization: 'granted' } })
    const rows = await report('cm-1')
    expect(rows.google_ads).toMatchObject({ status: 'sent', consent_rule: 'conversion' })
    expect(googleConsent('cm-1')).toEqual({ adUserData: 'CONSENT_DENIED', adPersonalization: 'CONSENT_GRANTED' })
    expect(rows.linkedin).toMatchObject({ status: 'skipped' })
    expect(String(rows.linkedin!.error)).toContain('denied ad user data')
  })

  it('Consent Mode analytics only: stored, sent nowhere, and the answer says why', async () => {
    const { body } = await convert('cm-2', { consent: { analytics_storage: 'granted', ad_storage: 'denied' } })
    expect(body.events![0]!.message).toBe('not sent: consent (consent-mode, the conversion\'s context.consent) allows measurement but not advertising')
  })

  it('an unreadable TC or GPP string is refused (422) naming the field', async () => {
    for (const [field, value] of [['tcString', 'not-a-tc-string'], ['gppString', 'garbage']] as const) {
      const { status, body } = await convert(`bad-${field}`, { consent: { [field]: value } })
      expect(status).toBe(422)
      expect(JSON.stringify(body)).toContain(`context.consent.${field}`)
    }
  })
})

describe('Google\'s Additional Consent string beside the TC string', () => {
  it('Meta shown to the visitor without consent (ATP 89) is skipped, naming the string; Google goes on', async () => {
    const { status } = await convert('ac-1', { consent: { tcString: tcString([1, 3, 4, 7], [755, 804, 1126]), addtlConsent: '2~2572~dv.89' } })
    expect(status).toBe(202)
    const rows = await report('ac-1')
    expect(rows.meta).toMatchObject({ status: 'skipped', error: 'the visitor\'s Additional Consent string gives meta no consent' })
    expect(rows.google_ads).toMatchObject({ status: 'sent' })
  })

  it('is taken under its ad-chain name addtl_consent too', async () => {
    await convert('ac-2', { consent: { tcString: tcString([1, 3, 4, 7], [755, 804, 1126]), addtl_consent: '2~~dv.89' } })
    expect((await report('ac-2')).meta).toMatchObject({ status: 'skipped' })
  })

  it('an unreadable one, or one without a TC string, is refused naming the field; nothing is stored', async () => {
    const tc = tcString([1, 3, 4, 7], [755])
    for (const [id, consent, field] of [
      ['ac-bad-1', { tcString: tc, addtlConsent: '2~1\u0000~dv.' }, 'addtlConsent'],
      ['ac-bad-2', { tcString: tc, addtlConsent: '2~\ud800~dv.' }, 'addtlConsent'],
      ['ac-bad-3', { tcString: tc, addtlConsent: `2~${'1.'.repeat(5000)}1~dv.` }, 'addtlConsent'],
      ['ac-bad-4', { addtlConsent: '2~89~dv.' }, 'addtlConsent'],
      ['ac-bad-5', { addtl_consent: '2~89~dv.' }, 'addtl_consent'],
    ] as const) {
      const { status, body } = await convert(id, { consent })
      expect(status, id).toBeGreaterThanOrEqual(400)
      expect(status, id).toBeLessThan(500)
      expect(JSON.stringify(body), id).toContain(`context.consent.${field}`)
      expect(await report(id)).toEqual({})
    }
  })
})

describe('a matched visit\'s consent applies when the conversion has none', () => {
  it('a visit whose Consent Mode allowed analytics only keeps its page views; its conversion is sent nowhere (rule: visit)', async () => {
    const copKey = app.dcgate.context.sites.byId('shop')!.copKey
    const response = await app.request(`/collect?cop_key=${copKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': '81.2.69.142' },
      body: JSON.stringify({
        v: 1, sid: 'sess-cm-analytics', vid: 'vis-cm-analytics', consent: 'granted', signals: { webdriver: false, interactions: 3, sinceLoadMs: 4000 },
        cmp: { source: 'consent-mode', analytics_storage: 'granted', ad_storage: 'denied', ad_user_data: 'denied', ad_personalization: 'denied' },
        hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/' }],
      }),
    })
    expect(response.status).toBe(202)
    await expect.poll(async () => (await sql<{ consent_purposes: unknown }[]>('select consent_purposes from visits where session_id = ?', ['sess-cm-analytics']))[0]?.consent_purposes, { timeout: 5000 })
      .toEqual({ source: 'consent-mode', measurement: 'granted', advertising: 'denied', ad_user_data: 'denied', ad_personalization: 'denied' })
    const { body } = await convert('visit-1', { identifiers: { dc_session_id: 'sess-cm-analytics' } })
    expect(body.events![0]!.message).toBe('not sent: consent (consent-mode, the matched visit) allows measurement but not advertising')
    expect((await report('visit-1')).meta).toMatchObject({ status: 'skipped', consent_rule: 'visit' })
  })
})

describe('context.consent on the Segment route', () => {
  it('a track call carrying a TC string is judged by it', async () => {
    const message = (messageId: string, tc: string) => ({ type: 'track', event: 'Order Completed', messageId, userId: 'u-1', properties: { revenue: 10, currency: 'USD', order_id: messageId }, context: { ip: '81.2.69.142', userAgent: CHROME, consent: { tcString: tc } } })
    for (const [id, tc] of [['seg-1', tcString([1, 3, 4, 7], [755])], ['seg-2', tcString([3, 4], [755])]] as const) {
      const response = await app.request('/v1/track', { method: 'POST', headers: { 'content-type': 'application/json', authorization: basicAuth(key) }, body: JSON.stringify(message(id, tc)) })
      expect(response.status).toBe(200)
    }
    await expect.poll(async () => (await report('seg-2')).meta?.status, { timeout: 5000 }).toBe('skipped')
    expect((await report('seg-2')).meta).toMatchObject({ consent_rule: 'conversion', error: 'the visitor denied consent (tcf, the conversion\'s context.consent)' })
    expect((await report('seg-1')).meta).toMatchObject({ consent_rule: 'conversion' })
    expect((await report('seg-1')).meta!.status).not.toBe('skipped')
  })
})
