import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import salesforce from '../../adapters/crm/salesforce/index.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { bootTestApp, type TestApp, type TestAppOptions } from '../helpers/app.ts'
import { sharedDatabase } from '../helpers/database.ts'
import { startFakeSalesforce, type FakeSalesforce } from '../fakes/salesforce.ts'

// Issue 18's done-when: Salesforce with refresh-token rotation keeps polling after the cached session expires, here
// through the scheduler and across a restart (the rotated token lives in the database, not in the process).
const CLIENT_SECRET = 'F4K3C0NSUM3RS3CR3T0000000000000000'
const dataDir = mkdtempSync(join(tmpdir(), 'dcgate-sf-rotation-'))
let crm: FakeSalesforce
let database: Awaited<ReturnType<typeof sharedDatabase>> | undefined
afterAll(async () => {
  await crm?.close()
  await database?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

async function boot(options: TestAppOptions): Promise<TestApp> {
  return bootTestApp({
    plugins: ['intake', 'release'],
    release: { pollIntervalSeconds: 10 },
    sites: [{
      id: 'shop', name: 'Shop',
      events: [{ key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule', release: 'when_qualified' }],
      crm: { salesforce: { clientId: crm.credentials.clientId, clientSecret: CLIENT_SECRET, refreshToken: crm.credentials.refreshToken, eventName: 'demo_booked', loginUrl: crm.loginUrl, baseUrl: crm.url, pageSize: 200 } },
    }],
  }, { ...options, adapters: [salesforce], builtInPlugins })
}

describe('Salesforce with refresh-token rotation through the scheduler', () => {
  it('keeps polling after the session expires and after a restart, each refresh with the token the last one issued', async () => {
    crm = await startFakeSalesforce({ clientSecret: CLIENT_SECRET, rotate: true })
    database = process.env.DATABASE_URL ? await sharedDatabase() : undefined
    const options: TestAppOptions = { dataDir, persistent: true, databaseUrl: database?.url, redis: false }

    let app = await boot(options)
    const key = await app.createKey('shop')
    const sql = <T extends object[]>(text: string) => app.dcgate.database.orm.em.getConnection().execute<T>(text)
    const hold = (messageId: string, email: string) => app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
      body: JSON.stringify({ event: 'demo_booked', messageId, context: { traits: { email } } }),
    })
    const stateOf = async (messageId: string) => (await sql<{ state: string }[]>(`select state from conversions where message_id = '${messageId}'`))[0]?.state
    const pollNow = () => sql(`update crm_poll_state set next_run_at = now()`)
    // The issued token is stored sealed with the server secret: never in clear, opened with the app's keyring.
    const pollState = async () => {
      const row = (await sql<{ site_id: string, poller: string, issued_token: string | null, last_error: string | null }[]>(`select site_id, poller, issued_token, last_error from crm_poll_state`))[0]
      if (!row) return undefined
      const sealed = row.issued_token
      if (sealed !== null) expect(crm.validRefreshTokens().some((token) => sealed.includes(token))).toBe(false)
      const opened = sealed === null ? null : app.dcgate.context.keyring.open('platform-credential', sealed, `crm_poll_state\u0000${row.site_id}\u0000${row.poller}`) ?? 'unopened'
      return { issued_token: opened, last_error: row.last_error }
    }

    try {
      expect((await hold('sf-1', 'first.lead@example.com')).status).toBe(202)
      crm.addLead({ email: 'First.Lead@example.com', status: 'Qualified', at: new Date(Date.now() - 60_000) })
      await pollNow()
      await expect.poll(() => stateOf('sf-1'), { timeout: 20_000, interval: 200 }).toBe('released')
      expect((await pollState())?.issued_token).toBe(crm.validRefreshTokens()[0])

      // The session times out: the next turn refreshes with the stored token, not the configured one.
      crm.expireSessions()
      expect((await hold('sf-2', 'second.lead@example.com')).status).toBe(202)
      crm.addLead({ email: 'second.lead@example.com', status: 'Qualified', at: new Date() })
      await pollNow()
      await expect.poll(() => stateOf('sf-2'), { timeout: 20_000, interval: 200 }).toBe('released')
    }
    finally {
      await app.close()
    }

    // A restart: the process forgets its session and anything it held in memory.
    crm.expireSessions()
    app = await boot(options)
    try {
      expect((await hold('sf-3', 'third.lead@example.com')).status).toBe(202)
      crm.addLead({ email: 'third.lead@example.com', status: 'Qualified', at: new Date() })
      await pollNow()
      await expect.poll(() => stateOf('sf-3'), { timeout: 20_000, interval: 200 }).toBe('released')
      const state = await pollState()
      expect(state).toEqual({ issued_token: crm.validRefreshTokens()[0], last_error: null })
      const sent = crm.tokenRequests.map((form) => form.refresh_token)
      expect(sent.length).toBeGreaterThanOrEqual(3)
      expect(sent[0]).toBe(crm.credentials.refreshToken)
      expect(new Set(sent).size).toBe(sent.length)
    }
    finally {
      await app.close()
    }
  }, 120_000) // two boots of a persistent embedded database and three scheduler turns (a due check every 5 s)
})
