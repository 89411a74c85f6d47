/**
 * The suite every ad-platform adapter runs (CONVENTIONS.md rule 3, unstorage's testDriver pattern). It checks
 * only what holds for every platform; a platform's own checks go in `additionalTests`, never by weakening this.
 * test/adapters/ad-platforms.test.ts runs it for every platform registered in adapters/index.ts, from the
 * platform's `test/adapters/<folder>.suite.ts`:
 *
 *   testAdPlatform({ adapter, folder: 'meta', options, invalidOptions, replies, countEvents, dedupKeyIn })
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import * as v from 'valibot'
import type { AdPlatformDefinition } from '../../core/registry.ts'
import type { ConversionEvent, DeliveryOutcome, PlatformRequest, PlatformResponse } from '../../core/delivery/types.ts'
import { FIXED_NOW, PLAIN_PII, USER_AGENT, batchOf, fixtureEvents, nobodyFixture, probeEvents, type PlainPiiField } from './fixtures.ts'
import { secretsOf, toShownRequest } from '../../plugins/dashboard/pages/request-redaction.ts'

/** A platform answer, as the fake server would send it. A string body is sent as is, anything else as JSON. */
export interface ContractReply {
  status: number
  headers?: Record<string, string>
  body: unknown
}

/** A failure answer plus the platform's own words that the outcome's message must quote. */
export interface FailureReply extends ContractReply {
  platformMessage: string
}

export interface AdPlatformContract<O> {
  adapter: AdPlatformDefinition<O>
  /** The adapter's folder under adapters/ads (its name with `_` written as `-`). */
  folder: string
  /** Valid options whose `baseUrl` points at a fake server. */
  options: O
  /** Options the schema must refuse, besides `{}`. */
  invalidOptions: unknown[]
  replies: {
    /** The platform accepting every event of the request. */
    success: (events: readonly ConversionEvent[]) => ContractReply
    /** Some events accepted and some not, with the status each event must end in (platforms that report per event). */
    partial?: (events: readonly ConversionEvent[]) => { reply: ContractReply, statuses: DeliveryOutcome['status'][] }
    /** A bad or expired credential. */
    auth: FailureReply
    /** Throttling; the suite also checks it with a `Retry-After` header added. */
    rateLimit: FailureReply
    /** A temporary failure on the platform's side. */
    serverError: FailureReply
  }
  /** Personal data the platform documents as sent in plain text (e.g. LinkedIn names); everything else must be hashed. */
  piiFields?: { sentPlain: readonly PlainPiiField[] }
  /** How many events a request body carries. */
  countEvents: (requestBody: unknown) => number
  /** Whether the request body carries the event's messageId in the platform's dedup field. */
  dedupKeyIn: (requestBody: unknown, event: ConversionEvent) => boolean
  additionalTests?: () => void
}

const ROOT = new URL('../../adapters/ads/', import.meta.url)
const FOLDER_FILES = ['index.ts', 'map.ts', 'response.ts', 'version.ts', 'README.md']

/** The adapters this suite was run for in this test file: test/adapters/ad-platforms.test.ts checks every registered one is. */
export const contractsRun = new Set<AdPlatformDefinition<any>>()

export function testAdPlatform<O>(contract: AdPlatformContract<O>): void {
  const { adapter, folder, replies } = contract
  contractsRun.add(adapter as AdPlatformDefinition<any>)
  const dir = new URL(`${folder}/`, ROOT)
  const resolve = (input: unknown) => v.parse(adapter.options, input)
  const withBaseUrl = (baseUrl: string) => resolve({ ...(contract.options as object), baseUrl })
  const map = (events: readonly ConversionEvent[], options = resolve(contract.options)) => adapter.toRequest(deepFreeze(events), options)
  const bodyOf = (request: PlatformRequest) => parseBody(request.body)
  const outcomes = (reply: ContractReply, events: readonly ConversionEvent[]) => {
    const result = adapter.parseResponse(toResponse(reply), deepFreeze(events))
    expect(result, 'one outcome per event').toHaveLength(events.length)
    return result
  }

  afterEach(() => {
    vi.useRealTimers()
  })

  describe(`ad platform contract: ${adapter.name}`, () => {
    describe('definition', () => {
      it('is an ad-platform named like its folder and its config key', () => {
        expect(adapter.kind).toBe('ad-platform')
        expect(adapter.name).toMatch(/^[a-z][a-z0-9_]*$/)
        expect(adapter.name.replace(/_/g, '-')).toBe(folder)
      })

      it('has the folder shape: index, map, response, version and README, index exporting this definition', async () => {
        for (const file of FOLDER_FILES) expect(existsSync(new URL(file, dir)), `adapters/ads/${folder}/${file}`).toBe(true)
        const index = await import(new URL('index.ts', dir).href) as { default: unknown }
        expect(index.default).toBe(adapter)
      })

      it('pins its API version in version.ts, with a link to the vendor changelog', async () => {
        const version = await import(new URL('version.ts', dir).href) as Record<string, unknown>
        const pinned = Object.entries(version).filter(([name]) => name.endsWith('_API_VERSION'))
        expect(pinned, 'exactly one *_API_VERSION export').toHaveLength(1)
        expect(adapter.apiVersion).toBeTruthy()
        expect(adapter.apiVersion).toBe(pinned[0]![1])
        expect(readFileSync(new URL('version.ts', dir), 'utf8')).toMatch(/https:\/\/\S+/)
      })

      it('declares its batch cap, request rate and event-age window', () => {
        expect(Number.isInteger(adapter.maxBatchSize) && adapter.maxBatchSize >= 1).toBe(true)
        // Counted per whole second (core/delivery/request-budget.ts): a fraction would let one request through a second.
        if (adapter.maxRequestsPerSecond !== undefined) expect(Number.isInteger(adapter.maxRequestsPerSecond) && adapter.maxRequestsPerSecond >= 1).toBe(true)
        // Unset only where the vendor documents no limit (the adapter's README says so).
        if (adapter.maxEventAgeDays !== undefined) expect(Number.isInteger(adapter.maxEventAgeDays) && adapter.maxEventAgeDays >= 1).toBe(true)
      })
    })

    describe('options', () => {
      it('accepts the valid options and refuses {} and each invalid one', () => {
        expect(v.safeParse(adapter.options, contract.options).issues).toBeUndefined()
        expect(v.safeParse(adapter.options, {}).success).toBe(false)
        contract.invalidOptions.forEach((invalid, index) => {
          expect(v.safeParse(adapter.options, invalid).success, `invalidOptions[${index}] was accepted`).toBe(false)
        })
      })

      it('takes a baseUrl and sends every request under it', () => {
        const baseUrl = (contract.options as { baseUrl?: unknown }).baseUrl
        expect(typeof baseUrl, 'the contract options set baseUrl to a fake').toBe('string')
        expect(map(fixtureEvents()).url.startsWith(baseUrl as string)).toBe(true)
        const proxy = 'https://proxy.example.test/ads'
        expect(map(fixtureEvents(), withBaseUrl(proxy)).url.startsWith(`${proxy}/`)).toBe(true)
      })

      it('says how it is tested before live: a test mode that changes the request, or why there is none; a read-only call, or why there is none', () => {
        expect(adapter.testEvents !== undefined || typeof adapter.testEventsGap === 'string', 'testEvents or testEventsGap').toBe(true)
        expect(adapter.connectionTest !== undefined || typeof adapter.connectionTestGap === 'string', 'connectionTest or connectionTestGap').toBe(true)
        if (adapter.testEvents) {
          const testOptions = adapter.testEvents.options(resolve(contract.options), 'TEST123')
          expect(testOptions, 'a code given on the page is enough to test').not.toHaveProperty('refused')
          const live = map(fixtureEvents())
          const test = map(fixtureEvents(), testOptions as O)
          expect(test.url !== live.url || test.body !== live.body, 'the test mode shows in the request').toBe(true)
        }
        if (adapter.connectionTest) expect(adapter.connectionTest.toRequest(resolve(contract.options), { authorization: 'Bearer t' }).method).toBe('GET')
      })
    })

    describe('mapping', () => {
      it('maps the fixtures to the request in the snapshot', () => {
        vi.useFakeTimers({ now: FIXED_NOW, toFake: ['Date'] })
        const request = map(fixtureEvents(), withBaseUrl('https://platform.example.test'))
        expect(request.method).toMatch(/^(POST|PUT)$/)
        expect({ ...request, body: bodyOf(request) }).toMatchSnapshot()
      })

      it('sends no personal data in plain text, in the URL, headers or body', () => {
        const request = map(fixtureEvents())
        const sent = `${request.url}\n${JSON.stringify(request.headers)}\n${request.body}`.toLowerCase()
        const allowed = new Set(contract.piiFields?.sentPlain ?? [])
        for (const [field, forms] of Object.entries(PLAIN_PII) as [PlainPiiField, readonly string[]][]) {
          if (allowed.has(field)) continue
          for (const form of forms) expect(sent.includes(form.toLowerCase()), `plain ${field} "${form}" was sent`).toBe(false)
        }
      })

      it('is shown on the dashboard\'s delivery view without credentials, IP (clear or hashed), user agent or page query', () => {
        // A visitor on loopback, as in a local trial: the platform URL (a fake on 127.0.0.1) must stay whole.
        const page = 'https://shop.example.com/thank-you?email=ann%40example.com&token=page-token-5f1c#done'
        const events = fixtureEvents().map((event) => ({ ...event, ip: '127.0.0.1', pageUrl: page }))
        const options = resolve(contract.options)
        const request = map(events, options)
        const shown = toShownRequest(request, options, events[0]!)
        const text = `${shown.url}\n${JSON.stringify(shown.headers)}\n${shown.body}`
        expect(shown.url).toBe(`${new URL(request.url).origin}${new URL(request.url).pathname}`)
        const hidden = [...secretsOf(options), USER_AGENT, '"127.0.0.1"', createHash('sha256').update('127.0.0.1').digest('hex'), 'page-token-5f1c', 'ann%40example.com']
        for (const value of hidden) expect(text.includes(value), `${value} is shown`).toBe(false)
      })

      it('carries every event\'s messageId as the platform\'s dedup key', () => {
        const events = fixtureEvents()
        const body = bodyOf(map(events))
        for (const event of events) expect(contract.dedupKeyIn(body, event), event.messageId).toBe(true)
        for (const event of events) expect(contract.dedupKeyIn(bodyOf(map([event])), event), `${event.messageId} alone`).toBe(true)
      })

      it('is deterministic and pure: same events, other clock, cloned input → byte-identical request', () => {
        const events = fixtureEvents()
        vi.useFakeTimers({ now: FIXED_NOW, toFake: ['Date'] })
        const first = JSON.stringify(map(events))
        vi.setSystemTime(new Date(FIXED_NOW.getTime() + 3_600_123))
        expect(JSON.stringify(map(structuredClone(events)))).toBe(first)
      })
    })

    describe('batching', () => {
      it(`maps a full batch (maxBatchSize = ${adapter.maxBatchSize}) to one request carrying every event`, () => {
        const events = batchOf(adapter.maxBatchSize)
        const body = bodyOf(map(events))
        expect(contract.countEvents(body)).toBe(events.length)
        for (const event of events) expect(contract.dedupKeyIn(body, event), event.messageId).toBe(true)
        expect(contract.dedupKeyIn(body, { ...events[0]!, messageId: 'msg-not-in-batch' })).toBe(false)
      })

      it('answers a full batch with one outcome per event, in order', () => {
        const events = batchOf(adapter.maxBatchSize)
        expect(outcomes(replies.success(events), events).every((o) => o.status === 'sent')).toBe(true)
      })
    })

    // skipReason alone decides that an event cannot be sent; toRequest maps every event it is given, and parseResponse
    // gives each its outcome, with no second filter to re-align (core/delivery asks skipReason before toRequest).
    describe('refusing an event: skipReason alone', () => {
      const options = () => resolve(contract.options)

      it('refuses, saying why, an event with nothing to match a person by: no request is made for it', () => {
        for (const event of [nobodyFixture(new Date()), { ...nobodyFixture(new Date()), consent: { adUserData: 'denied', adPersonalization: 'denied' } } as const]) {
          expect(adapter.skipReason?.(event, options()), 'skipReason of an event with no identifier').toMatch(/\w/)
          expect(planDelivery(adapter, [event], options()).request, 'a request with no event').toBeUndefined()
        }
      })

      it('maps every event it lets through: alone, each makes a request carrying exactly that event', () => {
        const accepted = probeEvents(new Date()).filter((event) => !adapter.skipReason?.(event, options()))
        expect(accepted.length, 'skipReason lets some probes through').toBeGreaterThan(0)
        for (const event of accepted) {
          const body = bodyOf(map([event]))
          expect(contract.countEvents(body), `${event.messageId} alone`).toBe(1)
          expect(contract.dedupKeyIn(body, event), `${event.messageId} alone`).toBe(true)
        }
      })

      it('gives what it lets through one request, one entry and one outcome per event, in order', () => {
        const plan = planDelivery(adapter, probeEvents(new Date()), options())
        for (const reason of Object.values(plan.refused)) expect(reason).toMatch(/\w/)
        expect(contract.countEvents(bodyOf(plan.request!))).toBe(plan.sent.length)
        expect(outcomes(replies.success(plan.sent), plan.sent)).toEqual(plan.sent.map(() => ({ status: 'sent' })))
      })
    })

    describe('classification', () => {
      const events = fixtureEvents()

      it('success → every event sent', () => {
        expect(outcomes(replies.success(events), events)).toEqual(events.map(() => ({ status: 'sent' })))
      })

      it('auth failure → every event rejected, quoting the platform', () => {
        for (const outcome of outcomes(replies.auth, events)) expectOutcome(outcome, 'rejected', replies.auth.platformMessage)
      })

      it('rate limit → every event retried, after Retry-After when given', () => {
        for (const outcome of outcomes(replies.rateLimit, events)) expectOutcome(outcome, 'retry', replies.rateLimit.platformMessage)
        const withHeader = { ...replies.rateLimit, headers: { ...replies.rateLimit.headers, 'Retry-After': '7' } }
        for (const outcome of outcomes(withHeader, events)) expect(outcome).toMatchObject({ status: 'retry', retryAfterMs: 7000 })
      })

      it('server error → every event retried, quoting the platform', () => {
        for (const outcome of outcomes(replies.serverError, events)) expectOutcome(outcome, 'retry', replies.serverError.platformMessage)
      })

      it.runIf(replies.partial)('partial failure → each event its own status, in order', () => {
        const { reply, statuses } = replies.partial!(events)
        expect(new Set(statuses).size, 'a partial reply mixes statuses').toBeGreaterThan(1)
        expect(outcomes(reply, events).map((o) => o.status)).toEqual(statuses)
      })

      it('HTTP answers without the platform\'s body: 5xx and 408 retry (except 501), other 4xx reject', () => {
        const cases: [ContractReply, DeliveryOutcome['status']][] = [
          [{ status: 503, headers: { 'Content-Type': 'text/html' }, body: '<html><body>Service Unavailable</body></html>' }, 'retry'],
          [{ status: 502, body: '' }, 'retry'],
          [{ status: 408, body: 'Request Timeout' }, 'retry'],
          [{ status: 501, body: 'Not Implemented' }, 'rejected'],
          [{ status: 404, headers: { 'Content-Type': 'text/html' }, body: '<h1>Not Found</h1>' }, 'rejected'],
        ]
        for (const [reply, status] of cases) {
          for (const outcome of outcomes(reply, events)) {
            expect(outcome.status, `HTTP ${reply.status}`).toBe(status)
            expect(outcome.status === 'sent' || outcome.message.length > 0).toBe(true)
          }
        }
        const throttled = outcomes({ status: 429, headers: { 'Retry-After': '3' }, body: 'Too Many Requests' }, events)
        for (const outcome of throttled) expect(outcome).toMatchObject({ status: 'retry', retryAfterMs: 3000 })
      })
    })

    contract.additionalTests?.()
  })
}

/** What the delivery makes of some events: those skipReason refuses, with its words, and one request for the rest. */
export interface DeliveryPlan {
  refused: Record<string, string>
  /** The events sent, in order; none means no request at all. */
  sent: ConversionEvent[]
  request?: PlatformRequest
}

/** Asks skipReason first, as core/delivery does, and maps only what it lets through: never an empty request. */
export function planDelivery<O>(adapter: AdPlatformDefinition<O>, events: readonly ConversionEvent[], options: O): DeliveryPlan {
  const refused: Record<string, string> = {}
  const sent: ConversionEvent[] = []
  for (const event of events) {
    const reason = adapter.skipReason?.(event, options)
    if (reason) refused[event.messageId] = reason
    else sent.push(event)
  }
  return sent.length > 0 ? { refused, sent, request: adapter.toRequest(sent, options) } : { refused, sent }
}

/** The platform answer as the pipeline hands it to parseResponse. */
export function toResponse(reply: ContractReply): PlatformResponse {
  return {
    status: reply.status,
    headers: new Headers(reply.headers),
    body: typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body),
  }
}

/** A JSON body parsed; form or other bodies as their text. */
export function parseBody(body: string): unknown {
  try {
    return JSON.parse(body)
  }
  catch {
    return body
  }
}

// --- internal ---

function expectOutcome(outcome: DeliveryOutcome, status: 'rejected' | 'retry', platformMessage: string): void {
  expect(outcome.status).toBe(status)
  expect(outcome.status === 'sent' ? '' : outcome.message).toContain(platformMessage)
}

/** Freezes the events (Dates included) so a mapping that mutates its input throws. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}
