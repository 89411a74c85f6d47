import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { resolveConfig } from '../../core/config/load.ts'
import { BootError } from '../../core/errors.ts'
import { createKeyring } from '../../core/secrets/keyring.ts'
import { resolveServerSecrets, serverSecretFile } from '../../core/secrets/server-secret.ts'
import { bootTestApp, type TestApp, type TestAppOptions } from '../helpers/app.ts'
import { sharedDatabase } from '../helpers/database.ts'

/**
 * Issue 25: refresh tokens in platform_credentials were stored in clear and kept after their platform or site was
 * removed. They are sealed with a key derived from the server secret, and deleted at start when their connection left.
 */
const OLD_SECRET = 'old-server-secret-0123456789abcdefghijklmnop'
const NEW_SECRET = 'new-server-secret-0123456789abcdefghijklmnop'
const TOKEN = 'M.C123_BAY.0.U.-rotated-refresh-token-Cs4mW'
/** Several boots on one database in a test. */
const BOOTS_TIMEOUT_MS = 120_000
const dirs: string[] = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'dcgate-secrets-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe('the keyring', () => {
  const place = 'platform_credentials\u0000shop\u0000microsoft_ads'

  it('seals with AES-256-GCM under a key of its own per purpose and place: the value is not in the sealed text, and opens only there', () => {
    const keyring = createKeyring({ current: OLD_SECRET, previous: [] })
    const sealed = keyring.seal('platform-credential', TOKEN, place)
    expect(sealed).not.toContain(TOKEN)
    expect(sealed).not.toBe(keyring.seal('platform-credential', TOKEN, place))
    expect(keyring.open('platform-credential', sealed, place)).toBe(TOKEN)
    expect(keyring.open('platform-credential', sealed, 'platform_credentials\u0000other\u0000microsoft_ads')).toBeUndefined()
    expect(keyring.open('auth-cache', sealed, place)).toBeUndefined()
    const altered = sealed.replace(/\.([\w-])([\w-]*)\.([\w-]{22})$/, (_m, first: string, rest: string, tag: string) => `.${first === 'A' ? 'B' : 'A'}${rest}.${tag}`)
    expect(keyring.open('platform-credential', altered, place)).toBeUndefined()
  })

  it('during a rotation opens what the previous secret sealed, and says it is stale; without it, nothing opens', () => {
    const sealed = createKeyring({ current: OLD_SECRET, previous: [] }).seal('platform-credential', TOKEN, place)
    const rotating = createKeyring({ current: NEW_SECRET, previous: [OLD_SECRET] })
    expect(rotating.open('platform-credential', sealed, place)).toBe(TOKEN)
    expect(rotating.isStale(sealed)).toBe(true)
    expect(rotating.isStale(rotating.seal('platform-credential', TOKEN, place))).toBe(false)
    expect(createKeyring({ current: NEW_SECRET, previous: [] }).open('platform-credential', sealed, place)).toBeUndefined()
  })
})

describe('the server secret', () => {
  it('is generated once into <dataDir>/server-secret, mode 0600, unless configured', () => {
    const dataDir = tempDir()
    const generated = resolveServerSecrets({}, dataDir)
    expect(generated.current).toMatch(/^[\w-]{43}$/)
    expect(statSync(serverSecretFile(dataDir)).mode & 0o777).toBe(0o600)
    expect(resolveServerSecrets({}, dataDir).current).toBe(generated.current)
    expect(resolveServerSecrets({ secret: NEW_SECRET, previousSecrets: [OLD_SECRET] }, dataDir)).toEqual({ current: NEW_SECRET, previous: [OLD_SECRET] })
  })

  it('comes from DCGATE_SERVER_SECRET and DCGATE_PREVIOUS_SERVER_SECRETS, and a short one stops start-up without being printed', () => {
    const config = resolveConfig({ sites: [] }, { DCGATE_SERVER_SECRET: NEW_SECRET, DCGATE_PREVIOUS_SERVER_SECRETS: `${OLD_SECRET}, ${OLD_SECRET.toUpperCase()}` })
    expect(config.server).toMatchObject({ secret: NEW_SECRET, previousSecrets: [OLD_SECRET, OLD_SECRET.toUpperCase()] })
    let refused: unknown
    try {
      resolveConfig({ sites: [] }, { DCGATE_SERVER_SECRET: 'short-secret-value' })
    }
    catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(BootError)
    const described = (refused as BootError).describe()
    expect(described).toContain('server.secret')
    expect(described).not.toContain('short-secret-value')
  })
})

describe('platform_credentials at start', () => {
  const dataDir = tempDir()
  let database: Awaited<ReturnType<typeof sharedDatabase>> | undefined
  let app: TestApp | undefined
  afterAll(async () => {
    await app?.close()
    await database?.drop()
  })
  const destinations = { microsoft_ads: { tagId: '187004321', apiToken: 'uet-api-token-0123456789' } }
  async function boot(secrets: { secret: string, previousSecrets?: string[] }, sites: { id: string, name: string, destinations?: Record<string, Record<string, unknown>> }[]) {
    await app?.close()
    database ??= process.env.DATABASE_URL ? await sharedDatabase() : undefined
    const options: TestAppOptions = { dataDir, persistent: true, databaseUrl: database?.url }
    app = await bootTestApp({ plugins: ['intake'], server: secrets, sites }, options)
    return app
  }
  const sql = <T extends object[]>(text: string, params: unknown[] = []) => app!.dcgate.database.orm.em.getConnection().execute<T>(text, params)
  const stored = () => sql<{ site_id: string, platform: string, issued_token: string }[]>('select site_id, platform, issued_token from platform_credentials order by site_id, platform')
  const place = (site: string, platform: string) => `platform_credentials\u0000${site}\u0000${platform}`

  it('seals a token stored in clear, deletes those of a removed platform and a removed site; a rotation reseals with the new secret', async () => {
    const sites = [{ id: 'shop', name: 'Shop', destinations }, { id: 'old', name: 'Old shop', destinations }]
    await boot({ secret: OLD_SECRET }, sites)
    // As an earlier version left them: in clear, for configured connections and one the config never had.
    await sql(`insert into platform_credentials (site_id, platform, basis, issued_token) values
      ('shop', 'microsoft_ads', 'b1', ?), ('shop', 'google_ads', 'b2', 'plain-google-token'), ('old', 'microsoft_ads', 'b3', 'plain-old-token')`, [TOKEN])

    await boot({ secret: OLD_SECRET }, [sites[0]!])
    const [row, ...others] = await stored()
    expect(others).toEqual([])
    expect(row).toMatchObject({ site_id: 'shop', platform: 'microsoft_ads' })
    expect(row!.issued_token).not.toContain(TOKEN)
    expect(createKeyring({ current: OLD_SECRET, previous: [] }).open('platform-credential', row!.issued_token, place('shop', 'microsoft_ads'))).toBe(TOKEN)
    // And what the adapter reads through its credential store is the token.
    expect(app!.dcgate.context.keyring.open('platform-credential', row!.issued_token, place('shop', 'microsoft_ads'))).toBe(TOKEN)

    await boot({ secret: NEW_SECRET, previousSecrets: [OLD_SECRET] }, [sites[0]!])
    const [rotated] = await stored()
    expect(createKeyring({ current: NEW_SECRET, previous: [] }).open('platform-credential', rotated!.issued_token, place('shop', 'microsoft_ads'))).toBe(TOKEN)

    // The rotation is over: the previous secret can go, and the token still opens.
    await boot({ secret: NEW_SECRET }, [sites[0]!])
    expect(app!.dcgate.context.keyring.open('platform-credential', (await stored())[0]!.issued_token, place('shop', 'microsoft_ads'))).toBe(TOKEN)

    // The platform leaves the site's config: its token goes.
    await boot({ secret: NEW_SECRET }, [{ id: 'shop', name: 'Shop' }])
    expect(await stored()).toEqual([])
  }, BOOTS_TIMEOUT_MS)
})

describe('crm_poll_state at start', () => {
  const dataDir = tempDir()
  let database: Awaited<ReturnType<typeof sharedDatabase>> | undefined
  let app: TestApp | undefined
  afterAll(async () => {
    await app?.close()
    await database?.drop()
  })
  // A CRM nobody answers for (nothing listens on port 9): the polls fail, the tokens are what is looked at.
  const salesforce = { clientId: '3MVG9-consumer-key-0123456789', refreshToken: '5Aep861-configured-refresh-token', eventName: 'demo_booked', loginUrl: 'http://127.0.0.1:9', baseUrl: 'http://127.0.0.1:9' }
  const site = { id: 'shop', name: 'Shop', events: [{ key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule' as const, release: 'when_qualified' as const }], crm: { salesforce } }
  async function boot() {
    await app?.close()
    database ??= process.env.DATABASE_URL ? await sharedDatabase() : undefined
    app = await bootTestApp({ plugins: ['intake', 'release'], release: { pollIntervalSeconds: 3600 }, server: { secret: NEW_SECRET }, sites: [site] }, { dataDir, persistent: true, databaseUrl: database?.url, redis: false })
  }
  const sql = <T extends object[]>(text: string, params: unknown[] = []) => app!.dcgate.database.orm.em.getConnection().execute<T>(text, params)

  it('seals a CRM\'s rotated token stored in clear, and forgets the token of a site whose CRM left the config', async () => {
    await boot()
    await sql(`insert into crm_poll_state (site_id, poller, issued_token, issued_for) values ('shop', 'salesforce', ?, 'basis-1'), ('gone', 'salesforce', 'plain-gone-token', 'basis-2')
      on conflict (site_id, poller) do update set issued_token = excluded.issued_token, issued_for = excluded.issued_for`, [TOKEN])
    await boot()
    const rows = await sql<{ site_id: string, issued_token: string | null }[]>('select site_id, issued_token from crm_poll_state order by site_id')
    expect(rows.find((r) => r.site_id === 'gone')).toEqual({ site_id: 'gone', issued_token: null })
    const sealed = rows.find((r) => r.site_id === 'shop')!.issued_token!
    expect(sealed).not.toContain(TOKEN)
    expect(app!.dcgate.context.keyring.open('platform-credential', sealed, 'crm_poll_state\u0000shop\u0000salesforce')).toBe(TOKEN)
  }, BOOTS_TIMEOUT_MS)
})
