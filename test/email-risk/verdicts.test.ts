import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { createEmailAssessor, type EmailAssessor } from '../../plugins/email-risk/assess.ts'
import { resolveEmailRiskOptions } from '../../plugins/email-risk/options.ts'
import { startFakeDns, type FakeDns } from '../fakes/dns.ts'
import type { FakeServer } from '../fakes/server.ts'
import { MAIL_DOMAINS, RDAP_DOMAINS, startFakeRdap } from './support.ts'

let dns: FakeDns
let rdap: FakeServer
let assessor: EmailAssessor
let site = 0

beforeAll(async () => {
  dns = await startFakeDns(MAIL_DOMAINS)
  rdap = await startFakeRdap(RDAP_DOMAINS)
  assessor = createEmailAssessor(createStorage(), resolveEmailRiskOptions({ rdapUrl: rdap.url, dnsServers: [dns.server], timeoutMs: 3000 }))
})
afterAll(async () => {
  assessor.close()
  await dns.close()
  await rdap.close()
})

type Verdict = [action: 'ALLOW' | 'CHALLENGE' | 'BLOCK', label: 'low' | 'medium' | 'high' | 'critical', score: number, tags: string[]]

/**
 * Realistic sign-ups and what dcgate answers (each on a fresh site, so the site-wide repeat count plays no part).
 * Domains: northwind-traders.com 19 years old, acme-corp.com 10 years, fresh-startup.dev 95 days, brand-new-shop.io
 * 4 days (fake RDAP); each has an address, no MX record (fake DNS: an implicit MX); no-such-shop-domain.com does not exist.
 */
const TABLE: Record<string, Verdict> = {
  'anna.schmidt@northwind-traders.com': ['ALLOW', 'low', 0, []],
  'p.okonkwo@acme-corp.com': ['ALLOW', 'low', 0, []],
  'john.doe@gmail.com': ['ALLOW', 'low', 0, ['free_provider']],
  'maria.garcia84@yahoo.com': ['ALLOW', 'low', 0, ['free_provider']],
  'wojciech.szczepanski@outlook.com': ['ALLOW', 'low', 0, ['free_provider']],
  'nguyen.thi.hoa@gmail.com': ['ALLOW', 'low', 0, ['free_provider']],
  'chrzczonowicz.k@gmail.com': ['ALLOW', 'low', 0, ['free_provider']],
  'xu.li@hotmail.com': ['ALLOW', 'low', 0, ['free_provider']],
  'jane.doe+newsletter@gmail.com': ['ALLOW', 'low', 10, ['plus_addressing', 'free_provider']],
  'hello@fresh-startup.dev': ['ALLOW', 'low', 25, ['young_domain']],
  'ceo@brand-new-shop.io': ['CHALLENGE', 'medium', 45, ['young_domain']],
  'xkqwzrtp@gmail.com': ['CHALLENGE', 'medium', 35, ['gibberish_username', 'free_provider']],
  'a8f3k29d1x@outlook.com': ['CHALLENGE', 'medium', 35, ['gibberish_username', 'free_provider']],
  '5f2a9c0e1b7d@gmail.com': ['CHALLENGE', 'medium', 35, ['gibberish_username', 'free_provider']],
  'asdfgh.jkl@yahoo.com': ['CHALLENGE', 'medium', 35, ['gibberish_username', 'free_provider']],
  'user84721@gmail.com': ['CHALLENGE', 'medium', 35, ['bulk_pattern', 'free_provider']],
  'test_0042@outlook.com': ['CHALLENGE', 'medium', 35, ['bulk_pattern', 'free_provider']],
  'j.o.h.n.doe@gmail.com': ['CHALLENGE', 'medium', 35, ['bulk_pattern', 'free_provider']],
  'a.smith@hotnail.com': ['CHALLENGE', 'critical', 100, ['no_mail_server', 'domain_typo', 'domain_age_unknown']],
  'john.doe@gmial.com': ['CHALLENGE', 'critical', 100, ['no_mail_server', 'domain_typo', 'domain_age_unknown']],
  'qwerty123@brand-new-shop.io': ['BLOCK', 'critical', 100, ['gibberish_username', 'bulk_pattern', 'young_domain']],
  'orders@no-such-shop-domain.com': ['BLOCK', 'critical', 90, ['no_mail_server', 'domain_age_unknown']],
  'signup.bonus@mailinator.com': ['BLOCK', 'critical', 100, ['disposable_domain']],
  'kevin@guerrillamail.com': ['BLOCK', 'critical', 100, ['disposable_domain']],
  'shop.news@mx1.33mail.com': ['BLOCK', 'critical', 100, ['disposable_domain']],
  'sales@servfail.dns-trouble.net': ['ALLOW', 'low', 0, ['domain_age_unknown', 'mail_server_unknown']],
  // Reserved for examples and tests (RFC 2606): no one's address, whatever a list of providers says of example.com.
  'john.doe@example.com': ['BLOCK', 'critical', 100, ['reserved_domain']],
  'jane@example.net': ['BLOCK', 'critical', 100, ['reserved_domain']],
  'info@shop.example.org': ['BLOCK', 'critical', 100, ['reserved_domain']],
  'qa.user@shop.test': ['BLOCK', 'critical', 100, ['reserved_domain']],
  'ann@acme.example': ['BLOCK', 'critical', 100, ['reserved_domain']],
  'nobody@mail.invalid': ['BLOCK', 'critical', 100, ['reserved_domain']],
  'root@localhost': ['BLOCK', 'critical', 100, ['reserved_domain']],
  'dev@app.localhost': ['BLOCK', 'critical', 100, ['reserved_domain']],
}

describe('verdicts for realistic emails', () => {
  for (const [email, [action, label, score, tags]] of Object.entries(TABLE)) {
    it(`${email} → ${action} ${label} ${score} [${tags.join(', ')}]`, async () => {
      const info = await assessor.live(`site-${site++}`, email)
      expect({ action: info.action, label: info.risk_label, score: info.risk_score, tags: info.tags }).toEqual({ action, label, score, tags })
      expect(info.reasons).toHaveLength(info.tags.length)
    })
  }

  it('gives the typo fix as the corrected address, and the signals behind each verdict', async () => {
    const typo = await assessor.live('site-typo', 'john.doe@gmial.com')
    expect(typo.suggestion).toBe('john.doe@gmail.com')
    expect(typo.fraud_signals.identity_flags.free_provider).toBe(false)
    const young = await assessor.live('site-young', 'ceo@brand-new-shop.io')
    expect(young.fraud_signals.domain_maturity).toMatchObject({ age_days: 4, young_domain: true })
    expect(young.reasons).toEqual(['brand-new-shop.io was registered 4 days ago'])
    const gmail = await assessor.live('site-gmail', 'john.doe@gmail.com')
    expect(gmail.fraud_signals).toMatchObject({ mail_server: 'mx', domain_maturity: { age_days: null, registered_at: null, young_domain: false } })
    expect(gmail.digital_footprint.likely_real_person).toBe(true)
    const gone = await assessor.live('site-gone', 'orders@no-such-shop-domain.com')
    expect(gone.digital_footprint.likely_real_person).toBe(false)
  })

  it('answers a reserved domain as reserved: not a free provider, not a typo, and without asking RDAP or DNS', async () => {
    const [rdapBefore, dnsBefore] = [rdap.requests.length, dns.queries.length]
    const example = await assessor.live('site-reserved', 'john.doe@example.com')
    expect(example.reasons).toEqual(['example.com is reserved for examples and testing (RFC 2606); no real person\'s address uses it'])
    expect(example.fraud_signals).toMatchObject({ reserved_domain: true, disposable_domain: false, identity_flags: { free_provider: false } })
    expect(example.digital_footprint.likely_real_person).toBe(false)
    // shop.test is not a typo of shop.de.
    const test = await assessor.live('site-reserved', 'qa.user@shop.test')
    expect({ suggestion: test.suggestion, reserved: test.fraud_signals.reserved_domain }).toEqual({ suggestion: null, reserved: true })
    expect([rdap.requests.length, dns.queries.length]).toEqual([rdapBefore, dnsBefore])
    // Look-alikes are ordinary domains.
    for (const email of ['a@example.co', 'a@myexample.com', 'a@example.com.au', 'a@testing.io', 'a@gmail.com']) {
      expect((await assessor.offline('site-lookalike', email)).fraud_signals.reserved_domain, email).toBe(false)
    }
    expect((await assessor.live('site-gmail-flag', 'john.doe@gmail.com')).fraud_signals.reserved_domain).toBe(false)
  })

  it('flags minted aliases of one mailbox and numbered series on one site, not the first few', async () => {
    const aliases = ['alice+a', 'alice+b', 'alice+c', 'alice+d'].map((local) => `${local}@northwind-traders.com`)
    const flagged: boolean[] = []
    for (const email of aliases) flagged.push((await assessor.live('site-aliases', email)).fraud_signals.identity_flags.bulk_pattern)
    expect(flagged).toEqual([false, false, false, true])
    const series: boolean[] = []
    for (let i = 1; i <= 6; i++) series.push((await assessor.live('site-series', `lena.berg${i}@gmail.com`)).fraud_signals.identity_flags.bulk_pattern)
    expect(series).toEqual([false, false, false, false, false, true])
    // The same address checked again is not a new one; another site keeps its own count.
    for (let i = 0; i < 7; i++) expect((await assessor.live('site-repeat', 'solo.user1@gmail.com')).fraud_signals.identity_flags.bulk_pattern).toBe(false)
    expect((await assessor.live('site-other', 'lena.berg7@gmail.com')).fraud_signals.identity_flags.bulk_pattern).toBe(false)
  })
})
