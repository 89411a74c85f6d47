import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import { sha256Hex } from '../../core/identity/hash.ts'
import { EmailCheckAnswerSchema, type EmailCheckData } from '../../plugins/email-risk/result.ts'
import { COP_KEY, identify, startWorld, type EmailRiskWorld } from './support.ts'

let world: EmailRiskWorld
beforeAll(async () => {
  world = await startWorld({ config: { server: { trustProxy: true }, capture: { flushIntervalMs: 20 } } })
})
afterAll(() => world?.close())

async function data(response: Response): Promise<EmailCheckData> {
  expect(response.status).toBe(200)
  return v.parse(EmailCheckAnswerSchema, await response.json()).data
}

const sql = <T extends object[]>(text: string, params: unknown[] = []) => world.app.dcgate.context.orm.em.getConnection().execute<T>(text, params)

describe('POST /api/v1/services/email/check', () => {
  it('answers 401 without a key or with a wrong one, before reading the body', async () => {
    const missing = await world.check('anna@gmail.com', '')
    expect(missing.status).toBe(401)
    expect(await missing.json()).toEqual({ message: 'Missing x-dc-key header' })
    const wrong = await world.check('anna@gmail.com', 'dc_live_wrongwrongwrongwrongwrong')
    expect(wrong.status).toBe(401)
    expect(await wrong.json()).toEqual({ message: 'Invalid API key' })
  })

  it('answers 400 when the email is missing, empty or not an email, and counts none of them', async () => {
    for (const body of [undefined, '', '   ', 'not-an-email', 42]) {
      const response = await world.check(body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect((await response.json() as { message: string }).message).toMatch(/^email: /)
    }
    const empty = await world.app.request('/api/v1/services/email/check', { method: 'POST', headers: { 'x-dc-key': world.key } })
    expect(empty.status).toBe(400)
    expect(await sql('select * from email_check_quotas')).toEqual([])
  })

  it('answers a live check in the spec shape, saved as a server_sdk identified user, then from storage', async () => {
    const first = await data(await world.check('  Anna.Schmidt@Northwind-Traders.com '))
    expect(first.userInfo).toBeNull()
    expect(first.ipInfo).toBeNull()
    expect(first.emailInfo).toMatchObject({
      normalized_email: 'anna.schmidt@northwind-traders.com', domain: 'northwind-traders.com',
      action: 'ALLOW', risk_score: 0, risk_label: 'low', suggestion: null, answered_from: 'live',
      fraud_signals: {
        disposable_domain: false,
        identity_flags: { gibberish_username: false, bulk_pattern: false, plus_addressing: false, free_provider: false },
        domain_maturity: { young_domain: false },
        mail_server: 'implicit',
      },
      digital_footprint: { likely_real_person: true },
    })
    // 7000 days by the fake RDAP; on Redis the answer may be cached from an earlier run (a day older).
    expect(first.emailInfo.fraud_signals.domain_maturity.age_days).toBeGreaterThanOrEqual(7000)
    expect(first.emailInfo.fraud_signals.domain_maturity.age_days).toBeLessThan(7010)
    const [user] = await sql<{ source: string, email: string, email_risk_score: number, email_risk_label: string, is_disposable: boolean }[]>(
      `select source, email, email_risk_score, email_risk_label, is_disposable from identified_users where site_id = 'demo'`)
    expect(user).toEqual({ source: 'server_sdk', email: 'anna.schmidt@northwind-traders.com', email_risk_score: 0, email_risk_label: 'low', is_disposable: false })

    const rdapCalls = world.rdap.requests.length
    const dnsCalls = world.dns.queries.length
    const second = await data(await world.check('anna.schmidt@northwind-traders.com'))
    expect(second.emailInfo).toEqual({ ...first.emailInfo, answered_from: 'stored' })
    expect(second.userInfo).toMatchObject({ related_emails: [], related_email_count: 0, deviceFingerprint: null, source: 'server_sdk' })
    expect(second.ipInfo).toBeNull()
    expect(world.rdap.requests.length).toBe(rdapCalls)
    expect(world.dns.queries.length).toBe(dnsCalls)
    const listed = await world.app.request('/api/v1/export/identified-users', { headers: { 'x-dc-key': world.key } })
    if (listed.status === 200) expect(JSON.stringify(await listed.json())).toContain('server_sdk')
  })

  it('blocks a disposable address with the reason, without asking RDAP or DNS', async () => {
    const before = world.rdap.requests.length
    const { emailInfo } = await data(await world.check('signup.bonus@mailinator.com'))
    expect(emailInfo).toMatchObject({ action: 'BLOCK', risk_score: 100, risk_label: 'critical', fraud_signals: { disposable_domain: true } })
    expect(emailInfo.tags).toContain('disposable_domain')
    expect(emailInfo.reasons[emailInfo.tags.indexOf('disposable_domain')]).toBe('mailinator.com is a disposable (throwaway) email service')
    expect(emailInfo.digital_footprint.likely_real_person).toBe(false)
    expect(world.rdap.requests.length).toBe(before)
  })

  it('suggests the intended domain of a typo: john.doe@gmial.com → gmail.com', async () => {
    const { emailInfo } = await data(await world.check('john.doe@gmial.com'))
    expect(emailInfo.suggestion).toBe('john.doe@gmail.com')
    expect(emailInfo.action).toBe('CHALLENGE')
    expect(emailInfo.tags).toContain('domain_typo')
  })

  it('answers an email identified by the tracking script from storage: device fingerprint, related emails, IP details', async () => {
    const deviceHash = 'ab'.repeat(32)
    // A page view from a UK address (bundled geo data: 81.2.69.142 is GB), then the identification on that visit.
    const collected = await world.app.request(`/collect?cop_key=${COP_KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-forwarded-for': '81.2.69.142', 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/140.0 Safari/537.36' },
      body: JSON.stringify({ v: 1, sid: 'sess-maria-0001', vid: 'visitor-maria-01', consent: 'granted', hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/signup' }] }),
    })
    expect(collected.status).toBe(202)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect((await identify(world.app, 'maria.lopez@gmail.com', { sid: 'sess-maria-0001', vid: 'visitor-maria-01', deviceHash })).status).toBe(202)
    expect((await identify(world.app, 'm.lopez.work@acme-corp.com', { sid: 'sess-maria-0002', vid: 'visitor-maria-01', deviceHash })).status).toBe(202)
    expect((await identify(world.app, 'someone.else@gmail.com', { sid: 'sess-other-0001', vid: 'visitor-other-1', deviceHash: 'cd'.repeat(32) })).status).toBe(202)
    // The identification stored the risk with the user (capture:identify).
    const [risk] = await sql<{ email_risk_label: string, email_risk_score: number }[]>(`select email_risk_label, email_risk_score from identified_users where email = 'maria.lopez@gmail.com'`)
    expect(risk).toEqual({ email_risk_label: 'low', email_risk_score: 0 })

    const rdapCalls = world.rdap.requests.length
    const answer = await data(await world.check('maria.lopez@gmail.com'))
    expect(answer.emailInfo).toMatchObject({ action: 'ALLOW', answered_from: 'stored', normalized_email: 'maria.lopez@gmail.com' })
    expect(answer.userInfo).toMatchObject({
      related_emails: ['m.lopez.work@acme-corp.com'], related_email_count: 1, source: 'client_sdk',
      deviceFingerprint: { hash: deviceHash, short: deviceHash.slice(0, 12) },
    })
    expect(answer.ipInfo).toMatchObject({ ip: '81.2.69.142', country: 'GB', asn: 20712, is_vpn: false, is_tor: false, is_hosting: false })
    expect(world.rdap.requests.length).toBe(rdapCalls)
  })

  it('drops a stored answer kept in memory when the email is identified again', async () => {
    const first = await data(await world.check('maria.lopez@gmail.com'))
    expect(first.userInfo?.deviceFingerprint?.hash).toBe('ab'.repeat(32))
    expect((await identify(world.app, 'maria.lopez@gmail.com', { sid: 'sess-maria-0003', vid: 'visitor-maria-02', deviceHash: 'ef'.repeat(32) })).status).toBe(202)
    const again = await data(await world.check('maria.lopez@gmail.com'))
    expect(again.userInfo?.deviceFingerprint?.hash).toBe('ef'.repeat(32))
    expect(again.userInfo?.related_emails).toEqual([])
  })

  it('stores the risk of a disposable address identified by the tracking script', async () => {
    expect((await identify(world.app, 'promo.hunter@yopmail.com', { sid: 'sess-promo-0001', vid: 'visitor-promo-01' })).status).toBe(202)
    const [user] = await sql<{ email_risk_label: string, is_disposable: boolean }[]>(`select email_risk_label, is_disposable from identified_users where email = 'promo.hunter@yopmail.com'`)
    expect(user).toEqual({ email_risk_label: 'critical', is_disposable: true })
    const { emailInfo, userInfo } = await data(await world.check('promo.hunter@yopmail.com'))
    expect(emailInfo).toMatchObject({ action: 'BLOCK', answered_from: 'stored' })
    expect(userInfo).toMatchObject({ deviceFingerprint: null, related_email_count: 0 })
  })

  it('assesses, without any lookup, an email identified before the plugin ran when its domain\'s answers are cached', async () => {
    // Identifications from the browser are scored offline now: a private check of a colleague caches acme-corp.com.
    await data(await world.check('p.okonkwo@acme-corp.com'))
    await sql(`insert into identified_users (id, site_id, email, email_hash, source, ip_country, ip_is_vpn) values (gen_random_uuid(), 'demo', 'old.friend@acme-corp.com', ?, 'form', 'DE', true)`,
      [sha256Hex('old.friend@acme-corp.com')])
    const rdapCalls = world.rdap.requests.length
    const answer = await data(await world.check('old.friend@acme-corp.com'))
    expect(answer.emailInfo).toMatchObject({ action: 'ALLOW', answered_from: 'stored', fraud_signals: { mail_server: 'implicit' } })
    expect(answer.userInfo).toMatchObject({ source: 'form', deviceFingerprint: null })
    expect(answer.ipInfo).toMatchObject({ ip: null, country: 'DE', is_vpn: true })
    expect(world.rdap.requests.length).toBe(rdapCalls)
  })

  it('erases the stored assessment with the person (dsar:erase)', async () => {
    await data(await world.check('forget.me@gmail.com'))
    const emailHash = sha256Hex('forget.me@gmail.com')
    expect(await sql('select 1 from email_risk_results where email_hash = ?', [emailHash])).toHaveLength(1)
    await world.app.dcgate.hooks.callHook('dsar:erase', { siteId: 'demo', email: 'forget.me@gmail.com', emailHash })
    expect(await sql('select 1 from email_risk_results where email_hash = ?', [emailHash])).toHaveLength(0)
  })
})
