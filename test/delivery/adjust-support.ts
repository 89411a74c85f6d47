/** What the refund tests share: a Google Ads fake (which takes refunds) and a Meta fake (which does not), and a site's destinations for both. */
import { startFakeGoogleAds, type FakeGoogleAds, type FakeGoogleAdsInit } from '../fakes/google-ads.ts'
import { startFakeMeta, type FakeMeta } from '../fakes/meta.ts'

export interface RefundPlatforms {
  google: FakeGoogleAds
  meta: FakeMeta
  /** `sites[].destinations`: Meta, and Google Ads with a Purchase action (111). */
  destinations: Record<string, Record<string, unknown>>
  close: () => Promise<void>
}

/**
 * `google`: the fake's set-up (the scopes its refresh token was granted…); `googleOptions`: more google_ads options
 * (`adjustments` for refunds through the Google Ads API).
 */
export async function startRefundPlatforms(init: { google?: FakeGoogleAdsInit, googleOptions?: (google: FakeGoogleAds) => Record<string, unknown> } = {}): Promise<RefundPlatforms> {
  const [google, meta] = await Promise.all([startFakeGoogleAds(init.google), startFakeMeta()])
  return {
    google, meta,
    destinations: {
      meta: { pixelId: meta.pixelId, accessToken: meta.accessToken, baseUrl: meta.url },
      google_ads: {
        customerId: '123-456-7890', clientId: google.credentials.clientId, clientSecret: google.credentials.clientSecret,
        refreshToken: google.credentials.refreshToken, conversionActions: { Purchase: '111' }, baseUrl: google.url, oauthUrl: google.oauthUrl,
        ...init.googleOptions?.(google),
      },
    },
    close: async () => {
      await Promise.all([google.close(), meta.close()])
    },
  }
}
