import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

// Whatever a browser, a bot or an attacker posts to the public capture routes, the answer is a 2xx or a 4xx
// with a message: never a 500.
let app: TestApp
let copKey: string
beforeAll(async () => {
  app = await bootTestApp({ plugins: ['capture'], capture: { flushIntervalMs: 50 }, sites: [{ id: 'shop', name: 'Shop', consent: { banner: 'off' } }] })
  copKey = app.dcgate.context.sites.byId('shop')!.copKey
})
afterAll(() => app?.close())

const post = (path: string, body: string) => app.request(`${path}?cop_key=${copKey}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body })
const id = fc.stringMatching(/^[A-Za-z0-9_-]{8,20}$/)
const almostValid = fc.record({
  v: fc.oneof(fc.constant(1), fc.integer()),
  sid: fc.option(fc.oneof(id, fc.string()), { nil: undefined }),
  vid: fc.option(fc.oneof(id, fc.string()), { nil: undefined }),
  email: fc.oneof(fc.emailAddress(), fc.string()),
  via: fc.constantFrom('sdk', 'form', 'other'),
  hits: fc.array(fc.record({ t: fc.constantFrom('pageview', 'event', 'x'), ts: fc.oneof(fc.integer(), fc.double()), url: fc.string(), name: fc.string(), props: fc.dictionary(fc.string(), fc.jsonValue()) }), { maxLength: 3 }),
  clickIds: fc.dictionary(fc.constantFrom('gclid', 'fbc', 'nope'), fc.string()),
  consent: fc.constantFrom('granted', 'denied', 'unknown', 'maybe'),
}, { requiredKeys: [] })

describe('public capture routes under arbitrary input', () => {
  for (const path of ['/collect', '/identify', '/collect/worker', '/identify/worker']) {
    it(`${path} answers 2xx or 4xx, never 5xx`, async () => {
      await fc.assert(fc.asyncProperty(fc.oneof(fc.string(), fc.jsonValue().map((v) => JSON.stringify(v)), almostValid.map((v) => JSON.stringify(v))), async (body) => {
        const response = await post(path, body)
        expect(response.status, body).toBeLessThan(500)
      }), { numRuns: 150 })
    })
  }
})
