import * as v from 'valibot'
import { afterEach, describe, expect, it } from 'vitest'
import { adapters } from '../../adapters/index.ts'
import type { ResolvedConfig } from '../../core/config/schema.ts'
import { VendorError } from '../../plugins/dashboard/connect/errors.ts'
import { pkcePair } from '../../plugins/dashboard/connect/flows.ts'
import { timedFetch } from '../../plugins/dashboard/connect/http.ts'
import type { ConnectVendor, Grant, PickField, VendorContext } from '../../plugins/dashboard/connect/types.ts'
import { appOf, vendorOf } from '../../plugins/dashboard/connect/vendors.ts'
import type { FakeServer } from '../fakes/server.ts'
import { startFakeLinkedIn, startFakeMicrosoft, startFakeTikTok } from '../fakes/oauth/vendors.ts'
import { startFakeHubSpot, startFakeMeta, startFakePinterest, startFakeSalesforce } from '../fakes/oauth/vendors-more.ts'

const BASE = 'https://dcgate.test'
const APP = { clientId: 'dcgate-client', clientSecret: 'dcgate-secret' }
const redirectUri = (platform: string) => `${BASE}/dashboard/oauth/${platform}/callback`
const fakes: FakeServer[] = []
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()))
})

/** The descriptor's context against a fake, as `oauth.<platform>` with every URL pointed at it would give. */
function contextFor(vendor: ConnectVendor, fake: FakeServer, paths: { authorize: string, token: string }, extra: Record<string, string> = {}): VendorContext {
  const config = { oauth: { [vendor.platform]: { ...APP, ...extra, authorizeUrl: `${fake.url}${paths.authorize}`, tokenUrl: `${fake.url}${paths.token}`, apiBaseUrl: fake.url } } }
  return { app: appOf(config as unknown as ResolvedConfig, vendor, BASE)!, fetch: timedFetch(5000), siteEvents: ['qualified_lead'] }
}

/** Consent at the fake (it redirects back with a code and the state), then the code exchange. */
async function consent(vendor: ConnectVendor, ctx: VendorContext): Promise<Grant> {
  const pair = vendor.pkce ? pkcePair() : undefined
  const url = new URL(vendor.authorizeUrl(ctx.app, 'the-state', pair?.challenge))
  if (vendor.pkce) expect(url.searchParams.get('code_challenge_method')).toBe('S256')
  const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!)
  expect(back.origin + back.pathname).toBe(redirectUri(vendor.platform))
  expect(back.searchParams.get('state')).toBe('the-state')
  return vendor.exchange(ctx, back.searchParams.get('code') ?? back.searchParams.get('auth_code')!, pair?.verifier)
}

/** The adapter's options schema accepts what the descriptor built. */
function expectValid(vendor: ConnectVendor, options: Record<string, unknown>) {
  const definition = adapters.find((d) => d.kind === vendor.kind && d.name === vendor.adapter)!
  const result = v.safeParse(definition.options, options)
  expect(result.success ? [] : result.issues.map((i) => i.message)).toEqual([])
}

const choices = (fields: PickField[], name: string) => fields.find((f) => f.name === name)!.choices

describe('Connect descriptors against their vendors\' fakes', () => {
  it('Microsoft Advertising: PKCE, accounts and UET tags listed, the tag\'s Conversions API token read; no revoke offered', async () => {
    const vendor = vendorOf('microsoft_ads')!
    const fake = await startFakeMicrosoft({ ...APP, redirectUri: redirectUri('microsoft_ads'), developerToken: 'DEV123' })
    fakes.push(fake)
    const ctx = contextFor(vendor, fake, { authorize: '/common/oauth2/v2.0/authorize', token: '/common/oauth2/v2.0/token' }, { developerToken: 'DEV123' })
    const grant = await consent(vendor, ctx)
    const fields = await vendor.list(ctx, grant)
    expect(choices(fields, 'tag')).toEqual([{ value: '250001/150001/187004321', label: 'Shop tag (tag 187004321) — Shop account' }])
    const options = await vendor.toOptions(ctx, grant, new Map([['tag', '250001/150001/187004321']]))
    expect(options).toMatchObject({ tagId: '187004321', apiToken: 'uet-capi-token', baseUrl: fake.url, adjustments: { customerId: '250001', accountId: '150001', developerToken: 'DEV123', refreshToken: grant.refreshToken } })
    expectValid(vendor, options)
    expect(vendor.revoke).toBeUndefined()
  })

  it('LinkedIn: ad accounts (not VIEWER ones) and Conversions API rules, a refresh token kept, revoked at /oauth/v2/revoke', async () => {
    const vendor = vendorOf('linkedin')!
    const fake = await startFakeLinkedIn({ ...APP, redirectUri: redirectUri('linkedin') })
    fakes.push(fake)
    const ctx = contextFor(vendor, fake, { authorize: '/oauth/v2/authorization', token: '/oauth/v2/accessToken' })
    const grant = await consent(vendor, ctx)
    const fields = await vendor.list(ctx, grant)
    expect(choices(fields, 'account')).toEqual([{ value: '507404993', label: 'Shop ads (507404993)' }])
    expect(choices(fields, 'rule')).toEqual([{ value: '507404993/104012', label: 'CAPI purchase — Shop ads' }])
    const options = await vendor.toOptions(ctx, grant, new Map([['account', '507404993'], ['rule.Purchase', '507404993/104012']]))
    expect(options).toMatchObject({ refreshToken: grant.refreshToken, conversionRules: { Purchase: '104012' }, oauthUrl: `${fake.url}/oauth/v2/accessToken` })
    expectValid(vendor, options)
    await vendor.revoke!(ctx, options)
    expect(fake.auth.revoked).toEqual([grant.refreshToken])
  })

  it('TikTok: auth_code exchanged as JSON, advertisers and pixels listed, the token revoked; an error envelope shown as TikTok\'s', async () => {
    const vendor = vendorOf('tiktok')!
    const fake = await startFakeTikTok({ ...APP, redirectUri: redirectUri('tiktok') })
    fakes.push(fake)
    const ctx = contextFor(vendor, fake, { authorize: '/portal/auth', token: '/open_api/v1.3/oauth2/access_token/' })
    const grant = await consent(vendor, ctx)
    const fields = await vendor.list(ctx, grant)
    expect(choices(fields, 'pixel')).toEqual([{ value: 'C4ABCDEFGHIJKLMN1234', label: 'Shop pixel (C4ABCDEFGHIJKLMN1234) — Shop TikTok' }])
    const options = await vendor.toOptions(ctx, grant, new Map([['pixel', 'C4ABCDEFGHIJKLMN1234']]))
    expect(options).toEqual({ pixelCode: 'C4ABCDEFGHIJKLMN1234', accessToken: grant.accessToken, baseUrl: fake.url })
    expectValid(vendor, options)
    await vendor.revoke!(ctx, options)
    expect(fake.auth.revoked).toEqual([grant.accessToken])
    await expect(vendor.exchange(ctx, 'used-or-unknown', undefined)).rejects.toThrow('TikTok refused: Malformed auth code or the code was already used. (code 40102)')
  })

  it('Pinterest: the secret sent as HTTP Basic, ad accounts listed; a reused code is invalid_grant', async () => {
    const vendor = vendorOf('pinterest')!
    const fake = await startFakePinterest({ ...APP, redirectUri: redirectUri('pinterest') })
    fakes.push(fake)
    const ctx = contextFor(vendor, fake, { authorize: '/oauth/', token: '/v5/oauth/token' })
    const grant = await consent(vendor, ctx)
    const options = await vendor.toOptions(ctx, grant, new Map([['adAccount', choices(await vendor.list(ctx, grant), 'adAccount')[0]!.value]]))
    expect(options).toEqual({ adAccountId: '549755885175', accessToken: grant.accessToken, baseUrl: fake.url })
    expectValid(vendor, options)
    const used = /code=([^&]+)/.exec(fake.requests.find((r) => r.path === '/v5/oauth/token')!.body)![1]!
    await expect(vendor.exchange(ctx, used, undefined)).rejects.toThrow('Pinterest refused: invalid_grant: Malformed auth code or the code was already used.')
  })

  it('Salesforce: PKCE, the org at its instance_url with a site event picked, revoked at /services/oauth2/revoke', async () => {
    const vendor = vendorOf('salesforce')!
    const fake = await startFakeSalesforce({ ...APP, redirectUri: redirectUri('salesforce') })
    fakes.push(fake)
    const ctx = contextFor(vendor, fake, { authorize: '/services/oauth2/authorize', token: '/services/oauth2/token' })
    const grant = await consent(vendor, ctx)
    const fields = await vendor.list(ctx, grant)
    expect(choices(fields, 'instance')[0]!.label).toContain('owner@shop.example — org 00D000000000001')
    const options = await vendor.toOptions(ctx, grant, new Map([['eventName', 'qualified_lead']]))
    expect(options).toEqual({ clientId: APP.clientId, clientSecret: APP.clientSecret, refreshToken: grant.refreshToken, eventName: 'qualified_lead', loginUrl: fake.url, baseUrl: fake.url })
    expectValid(vendor, options)
    await vendor.revoke!(ctx, options)
    expect(fake.auth.revoked).toEqual([grant.refreshToken])
  })

  it('HubSpot: PKCE, the portal from the token\'s metadata, the refresh token kept and deleted on disconnect; a verifier that does not match is refused', async () => {
    const vendor = vendorOf('hubspot')!
    const fake = await startFakeHubSpot({ ...APP, redirectUri: redirectUri('hubspot') })
    fakes.push(fake)
    const ctx = contextFor(vendor, fake, { authorize: '/oauth/authorize', token: '/oauth/v1/token' })
    const grant = await consent(vendor, ctx)
    expect(choices(await vendor.list(ctx, grant), 'portal')[0]!.label).toBe('shop.hubspot.com (portal 48000001, owner@shop.example)')
    const options = await vendor.toOptions(ctx, grant, new Map([['eventName', 'qualified_lead']]))
    expect(options).toEqual({ clientId: APP.clientId, clientSecret: APP.clientSecret, refreshToken: grant.refreshToken, oauthUrl: `${fake.url}/oauth/v1/token`, eventName: 'qualified_lead', baseUrl: fake.url })
    expectValid(vendor, options)
    await vendor.revoke!(ctx, options)
    expect(fake.auth.revoked).toEqual([grant.refreshToken])

    const url = new URL(vendor.authorizeUrl(ctx.app, 's', pkcePair().challenge))
    const code = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!).searchParams.get('code')!
    await expect(vendor.exchange(ctx, code, pkcePair().verifier)).rejects.toThrow('HubSpot refused: invalid_grant: Invalid code verifier.')
  })

  it('Meta: a pasted token checked with GET /me and its pixels listed; a bad token refused in Meta\'s words', async () => {
    const vendor = vendorOf('meta')!
    const fake = await startFakeMeta('EAAG-good-system-user-token')
    fakes.push(fake)
    const config = { oauth: { meta: { apiBaseUrl: fake.url } } }
    const ctx: VendorContext = { app: appOf(config as unknown as ResolvedConfig, vendor, BASE)!, fetch: timedFetch(5000), siteEvents: [] }
    const grant = await vendor.exchange(ctx, 'EAAG-good-system-user-token', undefined)
    expect(grant.fields.name).toBe('dcgate system user')
    expect(choices(await vendor.list(ctx, grant), 'pixel')).toEqual([{ value: '1234567890123456', label: 'Shop pixel (1234567890123456) — Shop ads' }])
    const options = await vendor.toOptions(ctx, grant, new Map([['pixel', '1234567890123456']]))
    expect(options).toEqual({ pixelId: '1234567890123456', accessToken: 'EAAG-good-system-user-token', baseUrl: fake.url })
    expectValid(vendor, options)
    await expect(vendor.exchange(ctx, 'EAAG-revoked-token', undefined)).rejects.toThrow(new VendorError('Meta refused (HTTP 400): Invalid OAuth access token - Cannot parse access token'))
  })

  it('a redirect URI other than the registered one is refused at the token endpoint (redirect_uri_mismatch)', async () => {
    const vendor = vendorOf('linkedin')!
    const fake = await startFakeLinkedIn({ ...APP, redirectUri: redirectUri('linkedin') })
    fakes.push(fake)
    const ctx = contextFor(vendor, fake, { authorize: '/oauth/v2/authorization', token: '/oauth/v2/accessToken' })
    const url = new URL(vendor.authorizeUrl(ctx.app, 's', undefined))
    const code = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!).searchParams.get('code')!
    const elsewhere = { ...ctx, app: { ...ctx.app, redirectUri: 'https://elsewhere.test/callback' } }
    await expect(vendor.exchange(elsewhere, code, undefined)).rejects.toThrow('LinkedIn refused: redirect_uri_mismatch: Bad Request')
  })
})
