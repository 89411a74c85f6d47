import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defineAdPlatform } from '../../core/registry.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'

// Issue 17, item 6: a person who opted out of the sale or sharing of their data under a US state law (Global Privacy
// Control on a visit, or the conversion's context.consent) is sent with the platforms' limited-data-use signal on a
// `limited` site, not sent at all on a `drop` site, and sent as before on an `off` site; outside the US nothing
// changes. Each adapter maps `limitedDataUse` to its platform's signal (its own suite); this platform echoes it, so
// the test sees the ConversionEvent an adapter is given.
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const US_IP = '73.162.0.1'
const GB_IP = '81.2.69.142'
const SITES = { limited: 'limited', drop: 'drop', off: 'off' } as const

const echoPlatform = defineAdPlatform({
  name: 'echoads',
  apiVersion: 'v1',
  options: v.object({ baseUrl: v.pipe(v.string(), v.url()) }),
  maxBatchSize: 10,
  maxEventAgeDays: 7,
  toRequest: (events, options) => ({
    url: `${options.baseUrl}/events`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ events: events.map((e) => ({ id: e.messageId, limitedDataUse: e.limitedDataUse ?? null })) }),
  }),
  parseResponse: (response, events) => events.map(() => (response.status < 300 ? { status: 'sent' as const } : { status: 'rejected' as const, message: response.body })),
})

interface Received { id: string, limitedDataUse: { country?: string, state?: string } | null }

let fake: FakeServer
let app: TestApp
const keys: Record<string, string> = {}

beforeAll(async () => {
  fake = await startFakeServer(() => ({ status: 200, body: { ok: true } }))
  app = await bootTestApp({
    plugins: ['intake', 'capture'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    delivery: { workerIntervalMs: 25, publicGraceSeconds: 0 },
    sites: Object.values(SITES).map((id) => ({
      id, name: id, consent: { banner: 'off' as const, usPrivacy: id },
      destinations: { echoads: { baseUrl: `${fake.url}/${id}` } },
    })),
  }, { adapters: [echoPlatform] })
  for (const id of Object.values(SITES)) keys[id] = await app.createKey(id)
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const received = (siteId: string, messageId: string): Received | undefined => fake.requests
  .filter((r) => r.path.startsWith(`/${siteId}/`))
  .flatMap((r) => (JSON.parse(r.body) as { events: Received[] }).events)
  .find((e) => e.id === messageId)
const stored = async (messageId: string) => (await sql<{ us_privacy: unknown, ip: string | null, user_agent: string | null }[]>(
  'select us_privacy, ip, user_agent from conversions where message_id = ?', [messageId]))[0]
const report = async (siteId: string, messageId: string) => {
  const body = await (await app.admin('GET', `/sites/${siteId}/deliveries`)).json() as { deliveries: Record<string, unknown>[] }
  return body.deliveries.find((d) => d.message_id === messageId)
}

/** A page view of the tracking script; `gpc` as the browser sends it, in the Sec-GPC header. */
async function visit(siteId: string, sessionId: string, options: { ip?: string, gpc?: boolean } = {}): Promise<void> {
  const copKey = app.dcgate.context.sites.byId(siteId)!.copKey
  const response = await app.request(`/collect?cop_key=${copKey}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': options.ip ?? US_IP, ...(options.gpc ? { 'sec-gpc': '1' } : {}) },
    body: JSON.stringify({
      v: 1, sid: sessionId, vid: `vis-${sessionId}`, consent: 'granted', signals: { webdriver: false, interactions: 3, sinceLoadMs: 4000 },
      hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/' }],
    }),
  })
  expect(response.status).toBe(202)
  await expect.poll(async () => (await sql('select 1 from visits where session_id = ?', [sessionId])).length, { timeout: 5000 }).toBe(1)
}

/** A Purchase from the automation route, with the buyer's address and browser. */
async function convert(siteId: string, { context, ...body }: { messageId: string, context?: Record<string, unknown> }) {
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': keys[siteId]! },
    body: JSON.stringify({ event: 'Purchase', properties: { value: 20, currency: 'USD' }, ...body, context: { ip: '73.162.0.9', userAgent: CHROME, ...context } }),
  })
  return { status: response.status, answer: (await response.json() as { events: { message: string }[] }).events[0]! }
}

describe("consent.usPrivacy: 'limited'", () => {
  it('a conversion matched to a visit whose browser sent Sec-GPC: 1 reaches the platform with limitedDataUse, country and state', async () => {
    await visit(SITES.limited, 'sess-gpc-us-1', { gpc: true })
    const { status, answer } = await convert(SITES.limited, { messageId: 'ldu-1', context: { identifiers: { dc_session_id: 'sess-gpc-us-1' }, traits: { email: 'a@example.com', state: 'California' } } })
    expect(status).toBe(202)
    expect(answer.message).toBe('sent to 1 platform')
    expect(received(SITES.limited, 'ldu-1')).toEqual({ id: 'ldu-1', limitedDataUse: { country: 'us', state: 'ca' } })
    expect((await stored('ldu-1'))!.us_privacy).toEqual({ mode: 'limited', signal: 'gpc', country: 'us', state: 'ca' })
    expect(await report(SITES.limited, 'ldu-1')).toMatchObject({ status: 'sent', us_privacy: 'limited' })
  })

  it("a server conversion's context.consent.usPrivacyOptOut, with no location known, is sent with limitedDataUse and no place (the platform locates the person)", async () => {
    const { answer } = await convert(SITES.limited, { messageId: 'ldu-2', context: { consent: { usPrivacyOptOut: true }, traits: { email: 'b@example.com' } } })
    expect(answer.message).toBe('sent to 1 platform')
    expect(received(SITES.limited, 'ldu-2')).toEqual({ id: 'ldu-2', limitedDataUse: {} })
    expect((await stored('ldu-2'))!.us_privacy).toEqual({ mode: 'limited', signal: 'opt_out' })
  })

  it('context.consent.gpc counts as Global Privacy Control', async () => {
    await convert(SITES.limited, { messageId: 'ldu-3', context: { consent: { gpc: true }, traits: { email: 'c@example.com', country: 'US' } } })
    expect(received(SITES.limited, 'ldu-3')).toEqual({ id: 'ldu-3', limitedDataUse: { country: 'us' } })
  })

  it('a visitor outside the US, GPC or not, is sent as before and nothing is stored about it', async () => {
    await visit(SITES.limited, 'sess-gpc-gb-1', { gpc: true, ip: GB_IP })
    await convert(SITES.limited, { messageId: 'eu-1', context: { identifiers: { dc_session_id: 'sess-gpc-gb-1' }, traits: { email: 'd@example.com' } } })
    expect(received(SITES.limited, 'eu-1')).toEqual({ id: 'eu-1', limitedDataUse: null })
    expect((await stored('eu-1'))!.us_privacy).toBeNull()
    expect(await report(SITES.limited, 'eu-1')).toMatchObject({ status: 'sent', us_privacy: null })
    // The conversion's own country wins over the visit's: a buyer in Germany with an opt-out is not under US law.
    await convert(SITES.limited, { messageId: 'eu-2', context: { consent: { usPrivacyOptOut: true }, traits: { email: 'e@example.com', country: 'DE' } } })
    expect(received(SITES.limited, 'eu-2')).toEqual({ id: 'eu-2', limitedDataUse: null })
  })

  it('a person without any opt-out is sent as before', async () => {
    await visit(SITES.limited, 'sess-plain-us-1')
    await convert(SITES.limited, { messageId: 'plain-1', context: { identifiers: { dc_session_id: 'sess-plain-us-1' }, traits: { email: 'f@example.com' } } })
    expect(received(SITES.limited, 'plain-1')).toEqual({ id: 'plain-1', limitedDataUse: null })
    expect((await stored('plain-1'))!.us_privacy).toBeNull()
  })

  it('a pixel conversion of a GPC visitor is stored limited, and the worker sends it with limitedDataUse', async () => {
    const copKey = app.dcgate.context.sites.byId(SITES.limited)!.copKey
    const response = await app.request(`/collect?cop_key=${copKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': US_IP },
      // `gpc` in the body: what the script sends when navigator.globalPrivacyControl is true.
      body: JSON.stringify({
        v: 1, sid: 'sess-gpc-pixel', vid: 'vis-gpc-pixel', consent: 'granted', gpc: true, signals: { webdriver: false, interactions: 3, sinceLoadMs: 4000 },
        hits: [{ t: 'event', ts: Date.now(), url: 'https://shop.example/thanks', name: 'Purchase', id: 'pixel-ldu-1', props: { value: 5, currency: 'USD' } }],
      }),
    })
    expect(response.status).toBe(202)
    expect((await stored('pixel-ldu-1'))!.us_privacy).toEqual({ mode: 'limited', signal: 'gpc', country: 'us' })
    // Delivered in the background: the worker reads the stored decision back.
    await expect.poll(() => received(SITES.limited, 'pixel-ldu-1'), { timeout: 5000 }).toEqual({ id: 'pixel-ldu-1', limitedDataUse: { country: 'us' } })
  })
})

describe("consent.usPrivacy: 'drop'", () => {
  it('sends nothing: every delivery ends skipped, and the answer and the report say why', async () => {
    await visit(SITES.drop, 'sess-gpc-drop-1', { gpc: true })
    const { status, answer } = await convert(SITES.drop, { messageId: 'drop-1', context: { identifiers: { dc_session_id: 'sess-gpc-drop-1' }, traits: { email: 'g@example.com' } } })
    const reason = 'the person opted out of the sale or sharing of their data (US state privacy law) with Global Privacy Control; consent.usPrivacy is drop'
    expect(status).toBe(202)
    expect(answer.message).toBe(`not sent: ${reason}`)
    expect(await report(SITES.drop, 'drop-1')).toMatchObject({ status: 'skipped', attempts: 0, error: reason, us_privacy: 'drop' })
    // Neither the address nor the browser is kept for a conversion that goes nowhere.
    expect(await stored('drop-1')).toEqual({ us_privacy: { mode: 'drop', signal: 'gpc', country: 'us' }, ip: null, user_agent: null })
    await new Promise((resolve) => setTimeout(resolve, 150)) // a few worker turns
    expect(received(SITES.drop, 'drop-1')).toBeUndefined()
  })

  it("names context.consent when the opt-out came from the conversion", async () => {
    const { answer } = await convert(SITES.drop, { messageId: 'drop-2', context: { consent: { usPrivacyOptOut: true } } })
    expect(answer.message).toMatch(/opted out .* in context\.consent; consent\.usPrivacy is drop$/)
  })

  it('a person without an opt-out, or outside the US, is sent as before', async () => {
    await convert(SITES.drop, { messageId: 'drop-none-1', context: { traits: { email: 'h@example.com' } } })
    await convert(SITES.drop, { messageId: 'drop-gb-1', context: { consent: { gpc: true }, traits: { email: 'i@example.com', country: 'GB' } } })
    expect(received(SITES.drop, 'drop-none-1')).toEqual({ id: 'drop-none-1', limitedDataUse: null })
    expect(received(SITES.drop, 'drop-gb-1')).toEqual({ id: 'drop-gb-1', limitedDataUse: null })
  })
})

describe("consent.usPrivacy: 'off' (the default)", () => {
  it('sends an opted-out person as before, and records that the opt-out was seen', async () => {
    await visit(SITES.off, 'sess-gpc-off-1', { gpc: true })
    const { answer } = await convert(SITES.off, { messageId: 'off-1', context: { identifiers: { dc_session_id: 'sess-gpc-off-1' }, traits: { email: 'j@example.com' } } })
    expect(answer.message).toBe('sent to 1 platform')
    expect(received(SITES.off, 'off-1')).toEqual({ id: 'off-1', limitedDataUse: null })
    expect((await stored('off-1'))!.us_privacy).toEqual({ mode: 'off', signal: 'gpc', country: 'us' })
    expect(await report(SITES.off, 'off-1')).toMatchObject({ status: 'sent', us_privacy: 'off' })
  })
})

describe('context.consent', () => {
  it('refuses a value that is not true or false, naming the field', async () => {
    const response = await app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': keys[SITES.limited]! },
      body: JSON.stringify({ event: 'Purchase', messageId: 'bad-1', context: { consent: { gpc: 'yes' } } }),
    })
    expect(response.status).toBe(422)
    expect(await response.text()).toContain('context.consent.gpc: must be true or false')
  })

  it("accepts and ignores other keys, such as Segment's categoryPreferences", async () => {
    const { status } = await convert(SITES.limited, { messageId: 'segment-1', context: { consent: { categoryPreferences: { Advertising: true } }, traits: { email: 'k@example.com' } } })
    expect(status).toBe(202)
    expect(received(SITES.limited, 'segment-1')).toEqual({ id: 'segment-1', limitedDataUse: null })
  })
})
