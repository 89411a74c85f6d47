/**
 * The suite every CRM poller runs (CONVENTIONS.md rule 3). It checks what the release scheduler relies on, against
 * the poller's fake CRM: the options refuse nonsense and take a baseUrl; a first poll returns the leads qualified in
 * its look-back window and a cursor; polling on from a cursor returns what changed since, never losing a lead (the
 * overlap window may return a lead again: releases are idempotent, so that is allowed, but not leads from long
 * before the cursor, and a cursor that does not parse starts again from the look-back window); paging is followed to
 * the end; emails come back trimmed and lower case; credentials never travel in a URL; throttling (with the CRM's
 * Retry-After), refused credentials, answers that cannot be read, server failures, aborts and timeouts end in the
 * typed errors of adapters/crm/shared/errors.ts, or in the signal's own reason.
 * A poller's own checks go in `additionalTests`, never by weakening this.
 *
 *   testCrmPoller({ poller, folder: 'hubspot', start, options, badCredentials, secrets, invalidOptions, pagingRecords })
 */
import { existsSync, readFileSync } from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import type { CrmPollContext, CrmPollerDefinition, CrmPollResult } from '../../core/registry.ts'
import { CrmAuthError, CrmPollError, CrmRateLimitError } from '../../adapters/crm/shared/errors.ts'
import type { FakeReply, RecordedRequest } from '../fakes/server.ts'

/** What the suite needs from a fake CRM: a small table of leads it can change, and failure switches. */
export interface ContractCrm {
  /** The fake's address, for baseUrl (and Salesforce's loginUrl). */
  url: string
  /**
   * Stores a lead (HubSpot contact, Pipedrive deal and person, Salesforce lead) with this email as a person typed it
   * (null: none), last modified at `at` on the CRM's clock, qualified or not. Returns its id.
   */
  addLead: (email: string | null, at: Date, qualified: boolean) => string
  /** Marks the lead qualified, modified at `at` ("mark contact qualified" in the CRM). */
  qualify: (id: string, at: Date) => void
  /** The next data request gets the CRM's own rate-limit answer (status, headers, body). */
  throttleNext: () => void
  /** Data requests wait this long before the fake answers. */
  delay: (ms: number) => void
  /** How many data requests (searches, queries, lists; not token exchanges) the fake has answered. */
  dataRequests: () => number
  /** Raw replies for the next requests, whatever they are. */
  queue: (...replies: FakeReply[]) => void
  /** Every request the fake received (token exchanges too), in order. */
  requests: () => RecordedRequest[]
  close: () => Promise<void>
}

export interface CrmPollerContract<O> {
  poller: CrmPollerDefinition<O>
  /** The folder under adapters/crm whose index.ts default-exports the poller. */
  folder: string
  /** Tells runs apart when a poller runs the suite once per way of configuring "qualified". */
  label?: string
  /** Starts the fake CRM, empty. */
  start: () => Promise<ContractCrm>
  /** Valid options as written in the config, every URL pointing at the fake, eventName set. */
  options: (crm: ContractCrm) => Record<string, unknown>
  /** The same with credentials the CRM refuses. */
  badCredentials: (crm: ContractCrm) => Record<string, unknown>
  /** Secrets in `options` and `badCredentials` that no error message may echo. */
  secrets: (crm: ContractCrm) => string[]
  /** Options the schema must refuse, besides `{}`. */
  invalidOptions: unknown[]
  /** How many qualified leads make the poller read at least 3 pages with `options`. */
  pagingRecords: number
  additionalTests?: () => void
}

/** The scheduler's clock during the suite; the leads are placed relative to it. */
export const CONTRACT_NOW = new Date('2026-03-02T12:00:00.000Z')
const HOUR = 3_600_000
const before = (ms: number) => new Date(CONTRACT_NOW.getTime() - ms)

/** A cache like core's memory storage: values with a TTL. */
export function memoryCache(): CrmPollContext['cache'] & { entries: Map<string, { value: string, ttlSeconds: number }> } {
  const entries = new Map<string, { value: string, ttlSeconds: number }>()
  return {
    entries,
    get: async (key) => entries.get(key)?.value ?? null,
    set: async (key, value, ttlSeconds) => void entries.set(key, { value, ttlSeconds }),
  }
}

/** A poll context on real fetch, a fresh memory cache and the suite's clock. */
export function pollContext(overrides: Partial<CrmPollContext> = {}): CrmPollContext {
  return { fetch: globalThis.fetch, cache: memoryCache(), signal: AbortSignal.timeout(15_000), now: () => CONTRACT_NOW, ...overrides }
}

/** The pollers this suite ran for in this test file: test/crm/crm-pollers.test.ts checks every registered one did. */
export const contractsRun = new Set<CrmPollerDefinition<any>>()

export function testCrmPoller<O>(contract: CrmPollerContract<O>): void {
  const { poller } = contract
  contractsRun.add(poller as CrmPollerDefinition<any>)
  let crm: ContractCrm
  let ctx: CrmPollContext
  const resolve = (raw: unknown): O => v.parse(poller.options, raw)
  const poll = (cursor?: string, raw: unknown = contract.options(crm)) => poller.poll(resolve(raw), cursor, ctx)
  const emails = (result: CrmPollResult) => result.qualified.map((lead) => lead.email).sort()
  const eventName = () => contract.options(crm).eventName as string

  describe(`crm poller contract: ${poller.name}${contract.label ? ` (${contract.label})` : ''}`, () => {
    beforeEach(async () => {
      crm = await contract.start()
      ctx = pollContext()
    })
    afterEach(async () => {
      await crm.close()
    })

    describe('definition', () => {
      const dir = new URL(`../../adapters/crm/${contract.folder}/`, import.meta.url)

      it('is a crm-poller named like its folder, exported by its index.ts, with a README', async () => {
        expect(poller.kind).toBe('crm-poller')
        expect(poller.name).toMatch(/^[a-z][a-z0-9_]*$/)
        expect(poller.name.replace(/_/g, '-')).toBe(contract.folder)
        expect((await import(new URL('index.ts', dir).href) as { default: unknown }).default).toBe(poller)
        expect(existsSync(new URL('README.md', dir)), `adapters/crm/${contract.folder}/README.md`).toBe(true)
      })

      it('has the folder every poller has: index, map (pure), poll, response, version and README', () => {
        for (const file of ['index.ts', 'map.ts', 'poll.ts', 'response.ts', 'version.ts', 'README.md']) {
          expect(existsSync(new URL(file, dir)), `adapters/crm/${contract.folder}/${file}`).toBe(true)
        }
      })

      it('pins its API version in version.ts, with a link to the vendor changelog, and polls every few minutes', async () => {
        const version = await import(new URL('version.ts', dir).href) as Record<string, unknown>
        const pinned = Object.entries(version).filter(([name]) => name.endsWith('_API_VERSION'))
        expect(pinned, 'exactly one *_API_VERSION export').toHaveLength(1)
        expect(poller.apiVersion).toBe(pinned[0]![1])
        expect(readFileSync(new URL('version.ts', dir), 'utf8')).toMatch(/https:\/\/\S+/)
        expect(Number.isInteger(poller.intervalSeconds) && poller.intervalSeconds >= 60 && poller.intervalSeconds <= 3600).toBe(true)
      })
    })

    describe('options', () => {
      it('accepts the valid options and refuses {} and each invalid one', () => {
        expect(v.safeParse(poller.options, contract.options(crm)).issues).toBeUndefined()
        expect(v.safeParse(poller.options, {}).success).toBe(false)
        contract.invalidOptions.forEach((invalid, index) => {
          expect(v.safeParse(poller.options, invalid).success, `invalidOptions[${index}] was accepted`).toBe(false)
        })
      })

      it('takes a baseUrl (a proxy or a fake) and refuses one that is not an absolute http(s) URL', () => {
        expect(contract.options(crm).baseUrl, 'the contract options point baseUrl at the fake').toBe(crm.url)
        expect(v.safeParse(poller.options, { ...contract.options(crm), baseUrl: 'https://proxy.example.test/crm/' }).success).toBe(true)
        for (const baseUrl of ['proxy.example.test', 'ftp://proxy.example.test', '']) {
          expect(v.safeParse(poller.options, { ...contract.options(crm), baseUrl }).success, baseUrl).toBe(false)
        }
      })

      it('requires the event to release, as a site event key', () => {
        const { eventName: _, ...without } = contract.options(crm)
        expect(v.safeParse(poller.options, without).success).toBe(false)
        expect(v.safeParse(poller.options, { ...without, eventName: 'demo booked!' }).success).toBe(false)
      })
    })

    describe('polling', () => {
      /** Three qualified leads 2–3 h ago, two that are not, and one qualified before the look-back window. */
      function seed() {
        const lookbackDays = (resolve(contract.options(crm)) as { initialLookbackDays: number }).initialLookbackDays
        const ids = {
          ada: crm.addLead('ada@example.com', before(3 * HOUR), true),
          grace: crm.addLead('grace@example.org', before(2.5 * HOUR), true),
          alan: crm.addLead('alan@example.net', before(2 * HOUR), true),
          katherine: crm.addLead('katherine@example.com', before(4 * HOUR), false),
          edsger: crm.addLead('edsger@example.nl', before(1.5 * HOUR), false),
          ancient: crm.addLead('ancient@example.com', before((lookbackDays + 5) * 24 * HOUR), true),
        }
        return ids
      }

      it('first poll without a cursor: the leads qualified in the look-back window, the event to release, and a cursor', async () => {
        seed()
        const first = await poll()
        expect(emails(first)).toEqual(['ada@example.com', 'alan@example.net', 'grace@example.org'])
        for (const lead of first.qualified) expect(lead.eventName).toBe(eventName())
        expect(typeof first.cursor === 'string' && first.cursor.length > 0).toBe(true)
      })

      it('a second poll from that cursor returns nothing new; the overlap may repeat a recent lead, never an old one', async () => {
        seed()
        const first = await poll()
        const second = await poll(first.cursor)
        for (const email of emails(second)) expect(emails(first)).toContain(email)
        expect(emails(second)).not.toContain('ada@example.com')
        expect(typeof second.cursor).toBe('string')
        const third = await poll(second.cursor)
        expect(emails(third)).not.toContain('ada@example.com')
      })

      it('a lead qualified after the cursor is returned by the next poll', async () => {
        const ids = seed()
        const first = await poll()
        crm.qualify(ids.edsger, before(0.5 * HOUR))
        const next = await poll(first.cursor)
        expect(emails(next)).toContain('edsger@example.nl')
        expect(emails(next)).not.toContain('ada@example.com')
        expect(emails(next)).not.toContain('katherine@example.com')
        const after = await poll(next.cursor)
        for (const email of emails(after)) expect(['alan@example.net', 'edsger@example.nl']).toContain(email)
      })

      it('an empty CRM: no leads and a cursor, from which the next poll runs', async () => {
        const first = await poll()
        expect(first.qualified).toEqual([])
        expect(typeof first.cursor === 'string' && first.cursor.length > 0).toBe(true)
        expect((await poll(first.cursor)).qualified).toEqual([])
      })

      it('a cursor that does not parse starts again from the look-back window instead of failing', async () => {
        seed()
        const first = await poll()
        const fromGarbage = await poll('not a cursor')
        expect(emails(fromGarbage)).toEqual(emails(first))
        expect(fromGarbage.cursor).toBe(first.cursor)
      })

      it(`follows paging to the end (${contract.pagingRecords} qualified leads, at least 3 pages)`, async () => {
        const expected: string[] = []
        for (let i = 0; i < contract.pagingRecords; i++) {
          expected.push(`lead${String(i).padStart(4, '0')}@example.com`)
          crm.addLead(expected[i]!, before(10 * HOUR - i * 60_000), true)
        }
        const result = await poll()
        expect(emails(result)).toEqual(expected)
        expect(crm.dataRequests()).toBeGreaterThanOrEqual(3)
        const again = await poll(result.cursor)
        expect(emails(again).length).toBeLessThan(contract.pagingRecords)
      })

      it('normalises emails (trimmed, lower case), lists each once, and skips leads without a usable email', async () => {
        crm.addLead('  Ada.Lovelace@Example.COM ', before(HOUR), true)
        crm.addLead('ada.lovelace@example.com', before(0.9 * HOUR), true)
        crm.addLead('GRACE@EXAMPLE.ORG\t', before(0.8 * HOUR), true)
        crm.addLead(null, before(0.7 * HOUR), true)
        crm.addLead('not an email', before(0.6 * HOUR), true)
        const result = await poll()
        expect(emails(result)).toEqual(['ada.lovelace@example.com', 'grace@example.org'])
      })
    })

    describe('credentials', () => {
      it('never travel in a URL (proxies and access logs keep URLs)', async () => {
        for (let i = 0; i < contract.pagingRecords; i++) crm.addLead(`lead${i}@example.com`, before(10 * HOUR - i * 60_000), true)
        await poll()
        await poll(undefined, contract.badCredentials(crm)).catch(() => undefined)
        expect(crm.requests().length).toBeGreaterThanOrEqual(4)
        for (const request of crm.requests()) {
          for (const secret of contract.secrets(crm)) {
            expect(request.path).not.toContain(secret)
            expect(request.path).not.toContain(encodeURIComponent(secret))
          }
        }
      })
    })

    describe('failures', () => {
      it('a rate limit → CrmRateLimitError with retryAfterMs, so the scheduler can back off', async () => {
        crm.addLead('ada@example.com', before(HOUR), true)
        await poll()
        crm.throttleNext()
        const error = await poll().catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(CrmRateLimitError)
        const { retryAfterMs, retryable, crm: name } = error as CrmRateLimitError
        expect(Number.isFinite(retryAfterMs) && retryAfterMs > 0).toBe(true)
        expect(retryable).toBe(true)
        expect(name).toBe(poller.name)
      })

      it('bad credentials → CrmAuthError: not retryable, says what to do, echoes no secret', async () => {
        const error = await poll(undefined, contract.badCredentials(crm)).catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(CrmAuthError)
        const { message, retryable } = error as CrmAuthError
        expect(retryable).toBe(false)
        expect(message.length).toBeGreaterThan(40)
        for (const secret of contract.secrets(crm)) expect(message).not.toContain(secret)
      })

      it('a server failure without the CRM\'s body → a retryable CrmPollError', async () => {
        crm.addLead('ada@example.com', before(HOUR), true)
        await poll()
        crm.queue({ status: 502, headers: { 'content-type': 'text/html' }, body: '<html><body>Bad Gateway</body></html>' })
        const error = await poll().catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(CrmPollError)
        expect((error as CrmPollError).retryable).toBe(true)
        expect((error as CrmPollError).message).toContain('502')
      })

      it('a 429 with Retry-After → CrmRateLimitError waiting as long as the CRM asks', async () => {
        crm.addLead('ada@example.com', before(HOUR), true)
        await poll()
        crm.queue({ status: 429, headers: { 'retry-after': '42' }, body: {} })
        const error = await poll().catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(CrmRateLimitError)
        expect((error as CrmRateLimitError).retryAfterMs).toBe(42_000)
      })

      it('a 401 on a data request → CrmAuthError, not retryable, so the scheduler stops until the operator acts', async () => {
        crm.addLead('ada@example.com', before(HOUR), true)
        await poll()
        crm.queue({ status: 401, body: {} })
        const error = await poll().catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(CrmAuthError)
        expect(error).toMatchObject({ status: 401, retryable: false, crm: poller.name })
      })

      it('a 200 the poller cannot read (a proxy page, a changed API) → a retryable CrmPollError saying its shape, never its content', async () => {
        crm.addLead('ada@example.com', before(HOUR), true)
        await poll()
        // A 2xx body is the CRM's data: the message is logged and stored, so it may describe the body but not quote it.
        for (const [body, shape] of [['<html><body>Captive portal</body></html>', /HTTP 200 without .*: 40 bytes starting with "<"/], [{ unexpected: true, contact: 'grace@example.com' }, /HTTP 200 without .*: \d+ bytes starting with "\{"/]] as const) {
          crm.queue({ status: 200, headers: typeof body === 'string' ? { 'content-type': 'text/html' } : {}, body })
          const error = await poll().catch((caught: unknown) => caught)
          expect(error).toBeInstanceOf(CrmPollError)
          expect(error).toMatchObject({ status: 200, retryable: true })
          expect((error as Error).message).toMatch(shape)
          expect((error as Error).message).not.toMatch(/Captive portal|grace@example\.com/)
        }
      })

      it('the signal aborts a slow request', async () => {
        crm.addLead('ada@example.com', before(HOUR), true)
        await poll()
        crm.delay(5_000)
        const controller = new AbortController()
        ctx = { ...ctx, signal: controller.signal }
        const started = Date.now()
        setTimeout(() => controller.abort(), 50)
        const error = await poll().catch((caught: unknown) => caught)
        expect(Date.now() - started).toBeLessThan(2_000)
        expect((error as Error).name).toBe('AbortError')
      })

      it('a timeout signal ends a slow poll with the signal\'s TimeoutError, not a poll error', async () => {
        crm.addLead('ada@example.com', before(HOUR), true)
        await poll()
        crm.delay(5_000)
        ctx = { ...ctx, signal: AbortSignal.timeout(100) }
        const started = Date.now()
        const error = await poll().catch((caught: unknown) => caught)
        expect(Date.now() - started).toBeLessThan(2_000)
        expect((error as Error).name).toBe('TimeoutError')
      })

      it('an aborted signal sends nothing, the token exchange included', async () => {
        const controller = new AbortController()
        controller.abort()
        ctx = { ...ctx, signal: controller.signal }
        const error = await poll().catch((caught: unknown) => caught)
        expect((error as Error).name).toBe('AbortError')
        expect(crm.requests()).toHaveLength(0)
      })
    })

    contract.additionalTests?.()
  })
}
