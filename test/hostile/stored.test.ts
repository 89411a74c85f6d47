import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toStorableText } from '../../core/http/text.ts'
import { HOSTILE_VALUES, leafPaths, signedHeaders, startHostileServer, toJson, webhookFixture, withValue, type HostileServer } from './support.ts'

// What happens to hostile text that is taken rather than refused: the tracking script's routes and the webhook
// sources clean it (NUL removed, unpaired surrogates → U+FFFD) and store the rest; and the fields that land in a
// column of limited length are refused by name when longer, on every way in, instead of failing in PostgreSQL.

let server: HostileServer

beforeAll(async () => {
  server = await startHostileServer()
}, 120_000)
afterAll(() => server?.close())

const sql = <T extends object>(text: string, params: unknown[] = []) => server.app.dcgate.context.prepared<T>({ name: '', text, reusePlan: false }, params)

async function post(path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number, body: Record<string, unknown> }> {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://shop.example', ...headers }, body })
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}

async function eventually<T>(read: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (value !== undefined) return value
    if (Date.now() > until) throw new Error('not stored in time')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const collect = (body: string) => post(`/collect?cop_key=${server.copKey}`, body)
const webhook = (source: string, raw: string) => post(`/api/v1/conversions/${source}/${server.copKey}`, raw, signedHeaders(source, raw))
const automation = (body: unknown) => post('/api/v1/conversions/automation', JSON.stringify(body), { 'x-dc-key': server.key })

describe('text the tracking script and the webhooks send is cleaned and stored', () => {
  it('a /collect hit with NULs and a title cut inside an emoji is stored without them, and the next hit is stored too', async () => {
    const sid = 'cleaned_session_0001'
    // Written as the script's JSON.stringify writes them: \u0000 and a lone \ud83d as escapes.
    const poison = `{"v":1,"sid":"${sid}","vid":"cleaned_visitor_01","consent":"granted","hits":[{"t":"pageview","ts":${Date.now()},"url":"https://shop.example/a\\u0000b","title":"Sale 😀 \\ud83d"},{"t":"event","ts":${Date.now()},"url":"https://shop.example/","name":"add_to_cart","props":{"n\\u0000ote":"x\\u0000y","cut":"\\udc00!"}}]}`
    expect((await collect(poison)).status).toBe(202)
    const good = { v: 1, sid, vid: 'cleaned_visitor_01', consent: 'granted', hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/next', title: 'Next' }] }
    expect((await collect(JSON.stringify(good))).status).toBe(202)

    const rows = await eventually(async () => {
      const found = await sql<{ url: string, title: string | null, props: Record<string, unknown> | null }>('select url, title, props from page_events where session_id = $1 order by url', [sid])
      return found.length === 3 ? found : undefined
    })
    expect(rows).toEqual([
      { url: 'https://shop.example/', title: null, props: { note: 'xy', cut: '\uFFFD!' } },
      { url: 'https://shop.example/ab', title: 'Sale 😀 \uFFFD', props: null },
      { url: 'https://shop.example/next', title: 'Next', props: null },
    ])
  })

  it('a raw NUL in a /collect body (not valid JSON) is removed like an escaped one', async () => {
    const nul = String.fromCharCode(0)
    const body = `{"v":1,"sid":"raw_nul_session_01","vid":"raw_nul_visitor_1","consent":"granted","hits":[{"t":"pageview","ts":${Date.now()},"url":"https://shop.example/r${nul}aw${nul}"}]}`
    expect((await collect(body)).status).toBe(202)
    const [row] = await eventually(async () => {
      const found = await sql<{ url: string }>('select url from page_events where session_id = $1', ['raw_nul_session_01'])
      return found.length ? found : undefined
    })
    expect(row).toEqual({ url: 'https://shop.example/raw' })
  })

  it('an identification whose form fields hold a NUL is stored without it', async () => {
    const body = `{"v":1,"sid":"cleaned_session_0002","vid":"cleaned_visitor_02","email":"nul.name@shop.example","via":"form","consent":"granted","fields":{"first_name":"An\\u0000n"}}`
    expect((await post(`/identify?cop_key=${server.copKey}`, body)).status).toBe(202)
    const [visit] = await sql<{ first_name: string }>('select first_name from visits where session_id = $1', ['cleaned_session_0002'])
    expect(visit).toEqual({ first_name: 'Ann' })
  })

  it('a signed Shopify webhook with a NUL in its note and a line item title cut inside an emoji is stored, cleaned', async () => {
    const raw = webhookFixture('shopify')
      .replace('"note": null', '"note": "Leave it at the door\\u0000"')
      .replace(/"title": "([^"]*)"/, '"title": "$1 \\ud83c"')
    expect(raw).toContain('\\u0000')
    const answer = await webhook('shopify', raw)
    expect(answer.status).toBe(200)
    expect(answer.body.events).toMatchObject([{ messageId: 'shopify-order-820982911946154508', success: true }])
    const [row] = await sql<{ items: { name?: string }[] }>('select items from conversions where message_id = $1', ['shopify-order-820982911946154508'])
    expect(row!.items[0]!.name).toMatch(/ \uFFFD$/)
  })

  it('hostile values anywhere in a signed webhook: never a 5xx; unstorable text is answered as its cleaned form would be', async () => {
    const outcome = (answer: { status: number, body: Record<string, unknown> }) => ({ status: answer.status, code: answer.body.code, errors: answer.body.errors })
    for (const source of ['shopify', 'woocommerce', 'stripe', 'make', 'zapier']) {
      const fixture = JSON.parse(webhookFixture(source)) as object
      const paths = leafPaths(fixture)
      const kinds = fc.constantFrom('nul', 'surrogate', 'lowSurrogate', 'overLong', 'wrongType', 'deep') as fc.Arbitrary<keyof typeof HOSTILE_VALUES>
      await fc.assert(fc.asyncProperty(fc.constantFrom(...paths), kinds, async (path, kind) => {
        const value = HOSTILE_VALUES[kind]('text')
        const answer = await webhook(source, toJson(withValue(fixture, path, value)))
        const what = `${source} ${kind} at ${path.join('.')}: ${JSON.stringify(answer.body)}`
        expect(answer.status, what).toBeLessThan(500)
        if (kind === 'deep') expect(answer.body, what).toMatchObject({ code: 'INVALID_WEBHOOK' })
        if (typeof value === 'string' && value !== toStorableText(value)) {
          const cleaned = await webhook(source, toJson(withValue(fixture, path, toStorableText(value))))
          expect(outcome(answer), what).toEqual(outcome(cleaned))
        }
      }), { numRuns: 40 })
    }
  }, 300_000)
})

describe('fields longer than their column are refused by name', () => {
  const base = { event: 'Purchase', properties: { value: 10, currency: 'EUR' } }

  it('order_id over 255 characters: 422 on the conversion route and from an automation tool; 255 is stored', async () => {
    const long = { ...base, messageId: 'long-order-1', properties: { ...base.properties, order_id: 'o'.repeat(256) } }
    expect(await automation(long)).toEqual({ status: 422, body: { message: 'properties.order_id: Invalid length: Expected <=255', code: 'INVALID_CONVERSION', errors: ['properties.order_id: Invalid length: Expected <=255'] } })
    const zapier = await webhook('zapier', JSON.stringify(long))
    expect(zapier).toMatchObject({ status: 422, body: { code: 'INVALID_WEBHOOK', errors: ['properties.order_id: Invalid length: Expected <=255'] } })
    const fits = await automation({ ...long, messageId: 'long-order-2', properties: { ...base.properties, order_id: 'o'.repeat(255) } })
    expect(fits.status).toBe(202)
  })

  it('the visit id, the customer id and the email of a conversion: refused by name past their columns', async () => {
    const answer = await automation({
      ...base,
      context: { identifiers: { dc_session_id: 's'.repeat(129), customer_id: 'c'.repeat(256) }, traits: { email: `${'a'.repeat(246)}@shop.example` } },
    })
    expect(answer.status).toBe(422)
    const errors = answer.body.errors as string[]
    expect(errors).toEqual(expect.arrayContaining([
      'context.identifiers.dc_session_id: Invalid length: Expected <=128',
      'context.identifiers.customer_id: Invalid length: Expected <=255',
    ]))
    expect(errors.some((error) => error.startsWith('context.traits.email: '))).toBe(true)
  })

  it('an IPv6 address with a zone id of any length (which node and valibot call an address): refused by name', async () => {
    const ip = `fe80::1%${'z'.repeat(100)}`
    const answer = await automation({ ...base, context: { ip } })
    expect(answer).toMatchObject({ status: 422, body: { errors: ['context.ip: must be an IPv4 or IPv6 address'] } })
    const worker = { v: 1, sid: 'zone_session_0001', vid: 'zone_visitor_0001', hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/' }], ip, userAgent: 'Mozilla/5.0' }
    expect(await post(`/collect/worker?cop_key=${server.copKey}`, JSON.stringify(worker))).toMatchObject({ status: 400, body: { errors: ['ip: must be an IPv4 or IPv6 address'] } })
  })

  it('an automation tool\'s event name longer than the webhook type column is stored', async () => {
    const answer = await webhook('zapier', JSON.stringify({ ...base, event: `Lead ${'x'.repeat(200)}`, messageId: 'long-event-1' }))
    expect(answer.status).toBe(200)
    const [row] = await sql<{ source_event_type: string }>('select source_event_type from conversions where message_id = $1', ['long-event-1'])
    expect(row!.source_event_type).toHaveLength(64)
  })

  it('a pixel conversion\'s order_id, content_name and content_category: refused by name past their columns', async () => {
    const hit = { t: 'event', ts: Date.now(), url: 'https://shop.example/', name: 'Purchase', props: { order_id: 'o'.repeat(256), content_name: 'n'.repeat(501), content_category: 'c'.repeat(255) } }
    const answer = await collect(JSON.stringify({ v: 1, sid: 'long_props_session_1', vid: 'long_props_visitor1', consent: 'granted', hits: [hit] }))
    expect(answer).toEqual({ status: 400, body: {
      message: 'hits[0].props.order_id: Invalid length: Expected <=255; hits[0].props.content_name: Invalid length: Expected <=500',
      errors: ['hits[0].props.order_id: Invalid length: Expected <=255', 'hits[0].props.content_name: Invalid length: Expected <=500'],
    } })
  })

  it('a webhook\'s email past 254 characters is refused by name; a dc_session_id past 128 is dropped and the order stored', async () => {
    const email = `${'a'.repeat(246)}@shop.example`
    const tooLong = webhookFixture('shopify').replace(/"email": "[^"]*"/, `"email": "${email}"`)
    expect(await webhook('shopify', tooLong)).toMatchObject({ status: 422, body: { code: 'INVALID_WEBHOOK', errors: ['email: must be at most 254 characters'] } })
    const session = webhookFixture('shopify').replace('"note_attributes": [', `"note_attributes": [{ "name": "dc_session_id", "value": "${'s'.repeat(129)}" },`).replace('820982911946154508', '820982911946154509')
    expect(await webhook('shopify', session)).toMatchObject({ status: 200, body: { events: [{ success: true }] } })
  })
})
