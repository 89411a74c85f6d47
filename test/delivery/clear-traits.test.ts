import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeGoogleAds, type FakeGoogleAds } from '../fakes/google-ads.ts'
import { linkedInErrors, startFakeLinkedIn, type FakeLinkedIn } from '../fakes/linkedin.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { erasePastRetryWindow } from '../../core/delivery/queries/clear-fields.ts'

// Personal fields a platform takes in clear: LinkedIn's userInfo (names, company, title, country) and Google's address
// (hashed names, region and postal code in clear). Kept, like the IP address, only while a delivery may need them.
let app: TestApp
let linkedin: FakeLinkedIn
let google: FakeGoogleAds
let key: string

beforeAll(async () => {
  [linkedin, google] = await Promise.all([startFakeLinkedIn(), startFakeGoogleAds()])
  app = await bootTestApp({
    plugins: ['intake'],
    delivery: { workerIntervalMs: 25 },
    sites: [
      {
        id: 'shop', name: 'Shop', destinations: {
          linkedin: { accessToken: linkedin.accessToken, conversionRules: { Purchase: '101', Lead: '102' }, baseUrl: linkedin.url },
          google_ads: {
            customerId: '123-456-7890', clientId: google.credentials.clientId, clientSecret: google.credentials.clientSecret,
            refreshToken: google.credentials.refreshToken, conversionActions: { Purchase: '111', Lead: '222' }, baseUrl: google.url, oauthUrl: google.oauthUrl,
          },
        },
      },
      // A site with no platform that takes clear fields keeps none.
      { id: 'plain', name: 'Plain' },
    ],
  })
  key = await app.createKey('shop')
})
afterAll(async () => {
  await app?.close()
  await Promise.all([linkedin?.close(), google?.close()])
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const TRAITS = { email: 'ann.lee@example.com', first_name: ' Ann ', last_name: 'Lee', company: 'Fjordline Analytics', title: 'Procurement Lead', postal_code: '94025', country: 'US' }

function post(messageId: string, siteKey = key, traits: Record<string, string> = TRAITS) {
  return app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': siteKey },
    body: JSON.stringify({ event: 'Purchase', messageId, properties: { value: 50, currency: 'EUR' }, context: { traits, identifiers: { gclid: `Cj0-${messageId}` } } }),
  })
}

describe('personal fields a platform takes in clear', () => {
  it('LinkedIn receives userInfo and Google an address; once both deliveries ended sent, the clear fields are erased', async () => {
    expect((await post('clear-1')).status).toBe(202)
    const recorded = linkedin.conversions.find((c) => JSON.stringify(c).includes('"clear-1"'))
    expect(recorded).toMatchObject({ element: { user: { userInfo: { firstName: 'Ann', lastName: 'Lee', companyName: 'Fjordline Analytics', title: 'Procurement Lead', countryCode: 'US' } } } })
    const event = google.conversions.find((c) => JSON.stringify(c).includes('"clear-1"'))
    expect(JSON.stringify(event)).toMatch(/"address":\{"givenName":"[0-9a-f]{64}","familyName":"[0-9a-f]{64}","regionCode":"US","postalCode":"94025"\}/)
    expect(await sql(`select clear_traits, clear_erased_at is not null as erased from conversions where message_id = 'clear-1'`)).toEqual([{ clear_traits: null, erased: true }])
  })

  it('a failed delivery keeps them for its retry window, then they are erased with the IP address', async () => {
    linkedin.queue(linkedInErrors.revokedToken(), linkedInErrors.revokedToken())
    expect((await post('clear-2')).status).toBe(202)
    await expect.poll(async () => (await sql<{ status: string }[]>(`select d.status from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = 'clear-2' and d.provider = 'linkedin'`))[0]?.status, { timeout: 10_000 }).toBe('failed')
    expect(await sql(`select clear_traits from conversions where message_id = 'clear-2'`)).toEqual([{ clear_traits: { firstName: 'Ann', lastName: 'Lee', company: 'Fjordline Analytics', title: 'Procurement Lead', postalCode: '94025' } }])
    await sql(`update conversions set created_at = now() - interval '8 days' where message_id = 'clear-2'`)
    expect(await erasePastRetryWindow(app.dcgate.context.prepared, 7, 1000)).toBe(1)
    expect(await sql(`select clear_traits from conversions where message_id = 'clear-2'`)).toEqual([{ clear_traits: null }])
  })

  it('is not kept for a site whose platforms take none in clear', async () => {
    const plainKey = await app.createKey('plain')
    expect((await post('clear-3', plainKey)).status).toBe(202)
    expect(await sql(`select clear_traits from conversions where message_id = 'clear-3'`)).toEqual([{ clear_traits: null }])
  })
})
