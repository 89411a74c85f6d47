/** What the refund tests share: a Google Ads fake (which takes refunds) and a Meta fake (which does not), and a site's destinations for both. */
import { startFakeGoogleAds, type FakeGoogleAds } from '../fakes/google-ads.ts'
import { startFakeMeta, type FakeMeta } from '../fakes/meta.ts'

export interface RefundPlatforms {
  google: FakeGoogleAds
  meta: FakeMeta
  /** `sites[].destinations`: Meta, and Google Ads with a Purchase action (111). */
  destinations: Record<string, Record<string, unknown>>
  close: () => Promise<void>
}

export async function startRefundPlatforms(): Promise<RefundPlatforms> {
  const [google, meta] = await Promise.all([startFakeGoogleAds(), startFakeMeta()])
  return {
    google, meta,
    destinations: {
      meta: { pixelId: meta.pixelId, accessToken: meta.accessToken, baseUrl: meta.url },
      google_ads: {
        customerId: '123-456-7890', clientId: google.credentials.clientId, clientSecret: google.credentials.clientSecret,
        refreshToken: google.credentials.refreshToken, conversionActions: { Purchase: '111' }, baseUrl: google.url, oauthUrl: google.oauthUrl,
      },
    },
    close: async () => {
      await Promise.all([google.close(), meta.close()])
    },
  }
}
