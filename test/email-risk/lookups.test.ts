/**
 * Who may make the server ask RDAP and DNS: never the public tracking script (its key is public), only the private
 * email check, within the site's lookups per minute; and what an erasure leaves in the caches (nothing of the
 * address). The domains are named per run and only the fakes know them, so with Redis (CI's second pass) no answer
 * cached by an earlier run hides a lookup, and the site ids are per run, so no other run's counter is shared.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { createStorage } from 'unstorage'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import { sha256Hex } from '../../core/identity/hash.ts'
import { createLookupLimit } from '../../plugins/email-risk/lookup-limit.ts'
import { EmailCheckAnswerSchema, type EmailCheckData, type EmailInfo } from '../../plugins/email-risk/result.ts'
import { onRedis } from '../helpers/database.ts'
import { registeredDaysAgo, identify, startWorld, type EmailRiskWorld } from './support.ts'

const run = Array.from(randomBytes(10), (byte) => String.fromCharCode(97 + (byte % 26))).join('')
/** Known only to the fakes: RDAP says 95 days old (young_domain), DNS gives an address (an implicit MX). */
const QUIET = `quiet-${run}.dev`
const FIRST = `first-${run}.io`
const SECOND = `second-${run}.io`
const THIRD = `third-${run}.io`
const ADDRESS = { A: ['198.51.100.50'] }
const fakes = {
  dnsDomains: { [QUIET]: ADDRESS, [FIRST]: ADDRESS, [SECOND]: ADDRESS, [THIRD]: ADDRESS },
  rdapDomains: { [QUIET]: registeredDaysAgo(95), [FIRST]: registeredDaysAgo(4000), [SECOND]: registeredDaysAgo(4000), [THIRD]: registeredDaysAgo(4000) },
}

async function data(response: Response): Promise<EmailCheckData> {
  expect(response.status).toBe(200)
  return v.parse(EmailCheckAnswerSchema, await response.json()).data
}

/** What reached the fakes about `domain`: RDAP requests and DNS questions. */
function asked(world: EmailRiskWorld, domain: string): { rdap: number, dns: number } {
  return {
    rdap: world.rdap.requests.filter((r) => r.path === `/domain/${domain}`).length,
    dns: world.dns.queries.filter((q) => q.name.toLowerCase() === domain).length,
  }
}

describe('identification from the browser is scored offline; the private check looks the domain up', () => {
  let world: EmailRiskWorld
  const siteId = `lookups-${run}`
  beforeAll(async () => {
    world = await startWorld({ siteId, ...fakes, config: { capture: { flushIntervalMs: 20 } } })
  })
  afterAll(() => world?.close())
  const sql = <T extends object[]>(text: string, params: unknown[] = []) => world.app.dcgate.context.orm.em.getConnection().execute<T>(text, params)

  it('/identify asks neither RDAP nor DNS about a domain, and stores a verdict that says it was scored offline', async () => {
    const email = `lena.berg@${QUIET}`
    const rdapBefore = world.rdap.requests.length
    const dnsBefore = world.dns.queries.length
    expect((await identify(world.app, email, { sid: 'sess-quiet-0001', vid: 'visitor-quiet-01' })).status).toBe(202)
    expect(world.rdap.requests.length).toBe(rdapBefore)
    expect(world.dns.queries.length).toBe(dnsBefore)

    const [row] = await sql<{ email_info: EmailInfo }[]>('select email_info from email_risk_results where site_id = ? and email_hash = ?', [siteId, sha256Hex(email)])
    expect(row!.email_info.tags).toContain('scored_offline')
    expect(row!.email_info.tags).not.toContain('young_domain')
    // Not "unknown because RDAP and DNS did not answer": they were not asked.
    expect(row!.email_info.tags).not.toContain('domain_age_unknown')
    expect(row!.email_info.tags).not.toContain('mail_server_unknown')
    expect(row!.email_info.reasons[row!.email_info.tags.indexOf('scored_offline')]).toContain('not looked up')
    expect(row!.email_info.fraud_signals).toMatchObject({ mail_server: 'unknown', domain_maturity: { age_days: null } })
    const [user] = await sql<{ email_risk_score: number, email_risk_label: string }[]>('select email_risk_score, email_risk_label from identified_users where site_id = ? and email = ?', [siteId, email])
    expect(user).toEqual({ email_risk_score: 0, email_risk_label: 'low' })
  })

  it('the private check of that address asks RDAP and DNS then, keeps the complete verdict, and answers it from storage after', async () => {
    const email = `lena.berg@${QUIET}`
    const answer = await data(await world.check(email))
    expect(asked(world, QUIET).rdap).toBe(1)
    expect(asked(world, QUIET).dns).toBeGreaterThan(0)
    expect(answer.emailInfo).toMatchObject({
      answered_from: 'live', action: 'ALLOW', risk_score: 25,
      fraud_signals: { mail_server: 'implicit', domain_maturity: { age_days: 95, young_domain: true } },
    })
    expect(answer.emailInfo.tags).toEqual(['young_domain'])
    // Still the identified visitor's answer: the identification's user info comes with it.
    expect(answer.userInfo).toMatchObject({ source: 'client_sdk' })
    const [user] = await sql<{ email_risk_score: number }[]>('select email_risk_score from identified_users where site_id = ? and email = ?', [siteId, email])
    expect(user!.email_risk_score).toBe(25)

    const before = asked(world, QUIET)
    const again = await data(await world.check(email))
    expect(again.emailInfo).toEqual({ ...answer.emailInfo, answered_from: 'stored' })
    expect(asked(world, QUIET)).toEqual(before)
  })

  it('a second identification at that domain uses the cached domain answers: complete, still without a lookup', async () => {
    const before = asked(world, QUIET)
    expect((await identify(world.app, `ola.nordmann@${QUIET}`, { sid: 'sess-quiet-0002', vid: 'visitor-quiet-02' })).status).toBe(202)
    expect(asked(world, QUIET)).toEqual(before)
    const [row] = await sql<{ email_info: EmailInfo }[]>('select email_info from email_risk_results where site_id = ? and email_hash = ?', [siteId, sha256Hex(`ola.nordmann@${QUIET}`)])
    expect(row!.email_info.tags).toEqual(['young_domain'])
  })
})

describe('the private check\'s lookups per minute', () => {
  let world: EmailRiskWorld
  beforeAll(async () => {
    world = await startWorld({ siteId: `limited-${run}`, capture: false, ...fakes, emailRisk: { lookupsPerMinute: 2 } })
  })
  afterAll(() => world?.close())

  it('past the limit a check makes no lookup, answers from the offline signals and says so; a cached domain still answers in full', async () => {
    expect((await data(await world.check(`anna@${FIRST}`))).emailInfo.fraud_signals.mail_server).toBe('implicit')
    expect((await data(await world.check(`bert@${SECOND}`))).emailInfo.fraud_signals.mail_server).toBe('implicit')
    const rdapBefore = world.rdap.requests.length
    const dnsBefore = world.dns.queries.length

    const limited = await data(await world.check(`carl@${THIRD}`))
    expect(world.rdap.requests.length).toBe(rdapBefore)
    expect(world.dns.queries.length).toBe(dnsBefore)
    expect(limited.emailInfo).toMatchObject({ action: 'ALLOW', answered_from: 'live', fraud_signals: { mail_server: 'unknown', domain_maturity: { age_days: null } } })
    expect(limited.emailInfo.tags).toEqual(['lookup_limit_reached'])
    expect(limited.emailInfo.reasons).toEqual([`${THIRD}'s age and mail server were not looked up: the site's network lookups for this minute are used up (emailRisk.lookupsPerMinute)`])

    // A domain already looked up needs no lookup, so the limit does not touch it.
    const cached = await data(await world.check(`dora@${FIRST}`))
    expect(cached.emailInfo.tags).toEqual([])
    expect(cached.emailInfo.fraud_signals.mail_server).toBe('implicit')

    // The limited verdict is not taken as complete: checked again, the lookup is tried again (and is still refused).
    const again = await data(await world.check(`carl@${THIRD}`))
    expect(again.emailInfo.tags).toEqual(['lookup_limit_reached'])
    expect(again.userInfo).toMatchObject({ source: 'server_sdk' })
    expect(world.rdap.requests.length).toBe(rdapBefore)
    expect(world.dns.queries.length).toBe(dnsBefore)
  })
})

describe('the lookup limit', () => {
  it('grants exactly the limit to a burst, and again in the next minute', async () => {
    const limit = createLookupLimit(createStorage(), 3)
    const now = Date.now()
    const burst = await Promise.all(Array.from({ length: 20 }, () => limit.take('shop', now)))
    expect(burst.filter(Boolean)).toHaveLength(3)
    expect(await limit.take('other', now)).toBe(true)
    expect(await limit.take('shop', now + 59_000)).toBe(false)
    expect(await limit.take('shop', now + 60_001)).toBe(true)
  })

  it('looks nothing up when set to 0', async () => {
    expect(await createLookupLimit(createStorage(), 0).take('shop')).toBe(false)
  })
})

describe('an erasure reaches the caches', () => {
  let world: EmailRiskWorld
  const siteId = `erase-${run}`
  beforeAll(async () => {
    world = await startWorld({ siteId, ...fakes, morePlugins: ['dsar'], config: { capture: { flushIntervalMs: 20 } } })
  })
  afterAll(() => world?.close())

  /** Every storage key (in memory: every mount; on Redis: dcgate:*) whose name or value holds one of `needles`. */
  async function keysHolding(needles: string[]): Promise<string[]> {
    const storage = world.app.dcgate.context.storage
    const found: string[] = []
    for (const key of await storage.getKeys()) {
      const value = JSON.stringify(await storage.getItem(key).catch(() => null))
      if (needles.some((needle) => key.includes(needle) || value.includes(needle))) found.push(key)
    }
    return found
  }

  it('after the deletion no cache entry, in memory or Redis, holds the address or its hashes; the next check starts afresh', async () => {
    const email = `mira.${run}@gmail.com`
    const needles = [email, sha256Hex(email), sha256Hex(`mira${run}@gmail.com`)]
    expect((await identify(world.app, email, { sid: 'sess-erase-0001', vid: 'visitor-erase-01' })).status).toBe(202)
    const before = await data(await world.check(email))
    expect(before.userInfo).not.toBeNull()
    // The test can see what it looks for: the site-wide shapes hold the address's digest.
    expect(await keysHolding(needles)).not.toEqual([])

    const deleted = await world.app.request('/api/v1/data-deletion', {
      method: 'POST', headers: { 'x-dc-key': world.key, 'content-type': 'application/json' }, body: JSON.stringify({ email }),
    })
    expect(deleted.status).toBe(200)
    expect(await keysHolding(needles)).toEqual([])
    if (onRedis) {
      const redis = new Redis(process.env.REDIS_URL!)
      try {
        const keys: string[] = []
        let cursor = '0'
        do {
          const [next, batch] = await redis.scan(cursor, 'MATCH', 'dcgate:*', 'COUNT', 1000)
          cursor = next
          keys.push(...batch)
        } while (cursor !== '0')
        const holding: string[] = []
        for (const key of keys) {
          const value = (await redis.type(key)) === 'string' ? (await redis.get(key)) ?? '' : ''
          if (needles.some((needle) => key.includes(needle) || value.includes(needle))) holding.push(key)
        }
        expect(holding).toEqual([])
      }
      finally {
        redis.disconnect()
      }
    }

    // The answer kept in memory went too: the address is unknown again, so the check is live and saved anew.
    const after = await data(await world.check(email))
    expect(after.userInfo).toBeNull()
    expect(after.emailInfo.answered_from).toBe('live')
  })
})
