/**
 * All eight platform fakes at once, with the `destinations` config that points a site at them: for the
 * end-to-end tests and the eight-platform benchmark.
 */
import { startFakeGoogleAds } from './google-ads.ts'
import { startFakeLinkedIn } from './linkedin.ts'
import { startFakeMeta } from './meta.ts'
import { startFakeMicrosoftAds } from './microsoft-ads.ts'
import { startFakePinterest } from './pinterest.ts'
import { startFakeReddit } from './reddit.ts'
import { startFakeTikTok } from './tiktok.ts'
import { startFakeX } from './x.ts'

export const PLATFORMS = ['meta', 'google_ads', 'tiktok', 'linkedin', 'microsoft_ads', 'reddit', 'pinterest', 'x'] as const
export type PlatformName = typeof PLATFORMS[number]

export interface AllPlatforms {
  /** `sites[].destinations` for a site delivering to every fake (four standard events mapped on each). */
  destinations: Record<PlatformName, Record<string, unknown>>
  /** The platforms whose fake recorded an accepted event carrying this id (messageId or order id). */
  acceptedBy: (id: string) => PlatformName[]
  /** The records a fake accepted, as it keeps them (Google: the conversion and the Data Manager event it came from). */
  accepted: (name: PlatformName) => readonly unknown[]
  /** How many events each fake has accepted so far. */
  acceptedCounts: () => Record<PlatformName, number>
  /** Requests each fake received, to tell "nothing new was sent" from "sent and refused". */
  requestCount: () => number
  /** Each fake, to look at what it received. */
  fakes: {
    meta: Awaited<ReturnType<typeof startFakeMeta>>, google: Awaited<ReturnType<typeof startFakeGoogleAds>>, tiktok: Awaited<ReturnType<typeof startFakeTikTok>>
    linkedin: Awaited<ReturnType<typeof startFakeLinkedIn>>, microsoft: Awaited<ReturnType<typeof startFakeMicrosoftAds>>, reddit: Awaited<ReturnType<typeof startFakeReddit>>
    pinterest: Awaited<ReturnType<typeof startFakePinterest>>, x: Awaited<ReturnType<typeof startFakeX>>
  }
  close: () => Promise<void>
}

export async function startAllPlatforms(): Promise<AllPlatforms> {
  const [meta, google, tiktok, linkedin, microsoft, reddit, pinterest, x] = await Promise.all([
    startFakeMeta(), startFakeGoogleAds(), startFakeTikTok(), startFakeLinkedIn(), startFakeMicrosoftAds(),
    startFakeReddit(), startFakePinterest(), startFakeX(),
  ])
  const [purchase, lead, signup, schedule] = x.eventIds as [string, string, string, string]
  const destinations: AllPlatforms['destinations'] = {
    meta: { pixelId: meta.pixelId, accessToken: meta.accessToken, baseUrl: meta.url },
    google_ads: {
      customerId: '123-456-7890', clientId: google.credentials.clientId, clientSecret: google.credentials.clientSecret,
      refreshToken: google.credentials.refreshToken, conversionActions: { Purchase: '111', Lead: '222', CompleteRegistration: '333', Schedule: '444' },
      baseUrl: google.url, oauthUrl: google.oauthUrl,
    },
    tiktok: { pixelCode: tiktok.pixelCode, accessToken: tiktok.accessToken, baseUrl: tiktok.url },
    linkedin: { accessToken: linkedin.accessToken, conversionRules: { Purchase: '101', Lead: '102', CompleteRegistration: '103', Schedule: '104' }, baseUrl: linkedin.url },
    microsoft_ads: { tagId: microsoft.tagId, apiToken: microsoft.apiToken, baseUrl: microsoft.url },
    reddit: { pixelId: reddit.pixelId, accessToken: reddit.accessToken, baseUrl: reddit.url },
    pinterest: { adAccountId: pinterest.adAccountId, accessToken: pinterest.accessToken, baseUrl: pinterest.url },
    x: {
      consumerKey: x.consumerKey, consumerSecret: x.consumerSecret, accessToken: x.accessToken, accessTokenSecret: x.accessTokenSecret,
      pixelId: x.pixelId, events: { Purchase: purchase, Lead: lead, CompleteRegistration: signup, Schedule: schedule }, baseUrl: x.url,
    },
  }
  const accepted: Record<PlatformName, () => readonly unknown[]> = {
    meta: () => meta.events,
    google_ads: () => google.conversions,
    tiktok: () => tiktok.events,
    linkedin: () => linkedin.conversions,
    microsoft_ads: () => microsoft.events,
    reddit: () => reddit.events,
    pinterest: () => pinterest.events,
    x: () => x.conversions,
  }
  const fakes = [meta, google, tiktok, linkedin, microsoft, reddit, pinterest, x]
  return {
    destinations,
    fakes: { meta, google, tiktok, linkedin, microsoft, reddit, pinterest, x },
    accepted: (name) => accepted[name](),
    acceptedBy: (id) => PLATFORMS.filter((name) => accepted[name]().some((record) => JSON.stringify(record).includes(`"${id}"`))),
    acceptedCounts: () => Object.fromEntries(PLATFORMS.map((name) => [name, accepted[name]().length])) as Record<PlatformName, number>,
    requestCount: () => fakes.reduce((sum, fake) => sum + fake.requests.length, 0),
    close: async () => {
      await Promise.all(fakes.map((fake) => fake.close()))
    },
  }
}
