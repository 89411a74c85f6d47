import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp, type TestAppOptions } from '../helpers/app.ts'
import { sharedDatabase } from '../helpers/database.ts'
import { startFakeMicrosoftAds, type FakeMicrosoftAds } from '../fakes/microsoft-ads.ts'

// Microsoft answers every refresh with a new refresh token (adapter README "Refresh tokens"): dcgate keeps the newest
// in platform_credentials and refreshes with it, across restarts, until a newly configured token starts a new chain.
const dataDir = mkdtempSync(join(tmpdir(), 'dcgate-ms-rotation-'))
let microsoft: FakeMicrosoftAds
let database: Awaited<ReturnType<typeof sharedDatabase>> | undefined
let app: TestApp | undefined
afterAll(async () => {
  await app?.close()
  await microsoft?.close()
  await database?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

async function boot(refreshToken: string, options: TestAppOptions): Promise<TestApp> {
  const adjustments = { ...microsoft.campaign, refreshToken, conversionNames: { Purchase: 'Purchases' }, apiUrl: microsoft.url, oauthUrl: microsoft.oauthUrl }
  return bootTestApp({
    plugins: ['intake'],
    delivery: { workerIntervalMs: 25 },
    sites: [{ id: 'shop', name: 'Shop', destinations: { microsoft_ads: { tagId: microsoft.tagId, apiToken: microsoft.apiToken, baseUrl: microsoft.url, adjustments } } }],
  }, options)
}

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app!.dcgate.database.orm.em.getConnection().execute<T>(text, params)
/** The stored token, opened with the app's keyring: it is sealed with the server secret, never stored in clear. */
async function storedToken(): Promise<string | undefined> {
  const sealed = (await sql<{ issued_token: string }[]>(`select issued_token from platform_credentials where site_id = 'shop' and platform = 'microsoft_ads'`))[0]?.issued_token
  if (sealed === undefined) return undefined
  expect(microsoft.issuedRefreshTokens.some((token) => sealed.includes(token))).toBe(false)
  return app!.dcgate.context.keyring.open('platform-credential', sealed, 'platform_credentials\u0000shop\u0000microsoft_ads')
}
const refreshedWith = () => microsoft.tokenRequests.map((form) => form.refresh_token)

/** A purchase sent to Microsoft, then fully refunded; resolves with the refund's delivery once it is `settled` (sent). */
async function purchaseAndRefund(orderId: string, settled = 'sent'): Promise<{ status: string, error: string | null }> {
  const key = await app!.createKey('shop')
  const response = await app!.request('/api/v1/conversions/automation', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({
      event: 'Purchase', messageId: `rot-${orderId}`, timestamp: new Date(Date.now() - 3_600_000).toISOString(),
      properties: { value: 40, currency: 'EUR', order_id: orderId }, context: { traits: { email: `buyer-${orderId}@shop.example` } },
    }),
  })
  expect(response.status).toBeLessThan(300)
  const [row] = await sql<{ id: string }[]>('select id from conversions where message_id = ?', [`rot-${orderId}`])
  await expect.poll(async () => (await sql<{ status: string }[]>(`select status from deliveries where conversion_id = ? and kind = 'conversion'`, [row!.id]))[0]?.status, { timeout: 20_000 }).toBe('sent')
  await app!.dcgate.hooks.callHook('conversion:refunded', { siteId: 'shop', orderId, refundId: `refund-${orderId}`, at: new Date(), conversionIds: [row!.id] })
  const adjustment = async () => (await sql<{ status: string, error: string | null }[]>(`select status, error from deliveries where conversion_id = ? and kind = 'adjustment'`, [row!.id]))[0]
  await expect.poll(async () => (await adjustment())?.status, { timeout: 20_000 }).toBe(settled)
  expect(microsoft.adjustments.some((a) => a.TransactionId === orderId)).toBe(settled === 'sent')
  return (await adjustment())!
}

describe('Microsoft Advertising refresh-token rotation for refunds', () => {
  it('refreshes with the newest token Microsoft issued, across a restart, until a newly configured token starts fresh', async () => {
    // An access token of 60 s is never cached (a minute's margin): every refund refreshes, as after an expiry.
    microsoft = await startFakeMicrosoftAds({ accessTokenLifetimeSeconds: 60 })
    database = process.env.DATABASE_URL ? await sharedDatabase() : undefined
    const options: TestAppOptions = { dataDir, persistent: true, databaseUrl: database?.url }
    const configured = microsoft.campaign.refreshToken

    app = await boot(configured, options)
    await purchaseAndRefund('7001')
    expect(refreshedWith()).toEqual([configured])
    expect(await storedToken()).toBe(microsoft.issuedRefreshTokens[0])

    // The access token expired: the next refresh sends the stored token, and keeps the one it gets back.
    await purchaseAndRefund('7002')
    expect(refreshedWith()).toEqual([configured, microsoft.issuedRefreshTokens[0]])
    expect(await storedToken()).toBe(microsoft.issuedRefreshTokens[1])

    // A restart on the same database goes on from the stored token.
    await app.close()
    app = await boot(configured, options)
    await purchaseAndRefund('7003')
    expect(refreshedWith().at(-1)).toBe(microsoft.issuedRefreshTokens[1])
    expect(await storedToken()).toBe(microsoft.issuedRefreshTokens[2])

    // The operator signs in again and pastes the new token: it is used as given, and its rotations kept.
    const pasted = microsoft.signIn()
    await app.close()
    app = await boot(pasted, options)
    await purchaseAndRefund('7004')
    expect(refreshedWith().at(-1)).toBe(pasted)
    expect(await storedToken()).toBe(microsoft.issuedRefreshTokens[3])
  })

  it('a stored token Microsoft refuses gives way to the configured one, tried once', async () => {
    // Continues on the app the test above left, configured with the pasted token: the stored one is revoked.
    const stored = (await storedToken())!
    const pasted = refreshedWith().at(-1)!
    microsoft.revokeRefreshToken(stored)
    await purchaseAndRefund('7005')
    expect(refreshedWith().slice(-2)).toEqual([stored, pasted])
    expect(await storedToken()).toBe(microsoft.issuedRefreshTokens.at(-1))
  })

  it('when Microsoft refuses the stored and the configured token, the refund fails saying to sign in again', async () => {
    // The test above ended refreshing with the configured (pasted) token, and stored the one it got back.
    const stored = (await storedToken())!
    const pasted = refreshedWith().at(-1)!
    microsoft.revokeRefreshToken(stored)
    microsoft.revokeRefreshToken(pasted)
    const before = microsoft.tokenRequests.length
    const failed = await purchaseAndRefund('7006', 'failed')
    expect(failed.error).toMatch(/invalid_grant.*sign in again/s)
    // One refusal of each token, no more: the configured one is tried once.
    expect(refreshedWith().slice(before)).toEqual([stored, pasted])
    expect(failed.error).not.toContain(stored)
  })
})
