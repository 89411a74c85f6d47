import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RouteDefinition } from '../../core/http/routes.ts'
import { DEEP, HOSTILE_VALUES, authHeaders, baseQuery, leafPaths, paramValue, pathWith, sampleBody, startHostileServer, toJson, withValue, type HostileKind, type HostileServer } from './support.ts'

// Every route of the route table (walked, so a new route is covered without a change here), over real HTTP, with
// hostile input in every field of a body it takes, in its query and in its path: text PostgreSQL cannot store,
// over-long text, wrong types, deep nesting, broken JSON. Nothing may answer 5xx or drop the connection; text
// PostgreSQL cannot store is refused with the route's 4xx naming the field, or cleaned on the tracking script's routes.

type AnyRoute = RouteDefinition<unknown, unknown, unknown>
interface Answer { status: number, text: string, type: string, length: string | null }

let server: HostileServer
let routes: readonly AnyRoute[]

beforeAll(async () => {
  server = await startHostileServer()
  routes = server.app.dcgate.context.routes.list()
}, 120_000)
afterAll(() => server?.close())

async function send(route: AnyRoute, input: { body?: string, query?: Record<string, string>, path?: string, rawQuery?: string }): Promise<Answer> {
  const query = new URLSearchParams({ ...baseQuery(server, route), ...input.query }).toString()
  const path = input.path ?? pathWith(route, (name) => paramValue(server, name))
  const url = `${server.url}${path}${query || input.rawQuery ? `?${[query, input.rawQuery].filter(Boolean).join('&')}` : ''}`
  const response = await fetch(url, {
    method: route.method,
    headers: { ...authHeaders(server, route), ...(input.body === undefined ? {} : { 'content-type': 'application/json' }), origin: 'https://shop.example' },
    body: input.body,
  })
  return { status: response.status, text: await response.text(), type: response.headers.get('content-type') ?? '', length: response.headers.get('content-length') }
}

/** `properties.items[0].name`, as the error bodies name a field. */
const fieldName = (path: (string | number)[]) => path.reduce<string>((out, step) => (typeof step === 'number' ? `${out}[${step}]` : out ? `${out}.${step}` : step), '')

const bodyRoutes = () => routes.filter((route) => route.body)
const describeRoute = (route: AnyRoute) => `${route.method} ${route.path}`

/** Checks one answer; returns what is wrong with it, if anything. */
function judge(answer: Answer, expected: 'not-5xx' | '4xx'): string | undefined {
  if (answer.status >= 500) return `answered ${answer.status}: ${answer.text.slice(0, 200)}`
  if (expected === '4xx' && (answer.status < 400 || answer.status > 499)) return `answered ${answer.status}, not a 4xx: ${answer.text.slice(0, 200)}`
  // The HTML pages (deletion proof and status) and the script answer in their own format; JSON errors have a message.
  if (answer.status >= 400 && answer.type.startsWith('application/json') && !/^\{.*"message":/.test(answer.text)) return `a ${answer.status} without the spec's {message} body: ${answer.text.slice(0, 200)}`
  // Sent whole, not chunked: a client or proxy that reads to the declared end gets all of it.
  if (answer.status >= 400 && answer.type.startsWith('application/json') && answer.length !== String(Buffer.byteLength(answer.text))) return `a ${answer.status} whose Content-Length is ${answer.length} for ${Buffer.byteLength(answer.text)} bytes`
  return undefined
}

describe('hostile input on every route of the route table, over HTTP', () => {
  it('walks a table that holds every kind of route: public, key, admin, capture, webhook, deletion', () => {
    const paths = routes.map(describeRoute)
    for (const expected of ['POST /collect', 'POST /identify', 'POST /api/v1/conversions/automation', 'POST /api/v1/conversions/:source/:api_key',
      'POST /api/v1/crm-release/:api_key/:secret', 'POST /public/data-deletion/request', 'POST /api/v1/data-deletion',
      'POST /api/v1/services/email/check', 'POST /admin/api/sites/:id/keys', 'GET /api/v1/export/health']) {
      expect(paths).toContain(expected)
    }
    expect(bodyRoutes().length).toBeGreaterThanOrEqual(10)
  })

  it('text PostgreSQL cannot store, in any field: refused with a 4xx naming the field, or cleaned on the tracking script\'s routes', async () => {
    const failures: string[] = []
    for (const route of bodyRoutes()) {
      const sample = sampleBody(server, route)
      for (const path of leafPaths(sample)) {
        for (const kind of ['nul', 'surrogate', 'lowSurrogate'] as const) {
          const original = String(path.reduce<unknown>((at, step) => (at as Record<string | number, unknown>)[step], sample))
          const answer = await send(route, { body: toJson(withValue(sample, path, HOSTILE_VALUES[kind](original))) })
          const clean = route.text === 'clean'
          const problem = judge(answer, clean ? 'not-5xx' : '4xx')
            ?? (!clean && !answer.text.includes(`${fieldName(path)}: contains`) ? `did not name ${fieldName(path)}: ${answer.text.slice(0, 200)}` : undefined)
          if (problem) failures.push(`${describeRoute(route)} ${kind} in ${fieldName(path)}: ${problem}`)
        }
      }
      // A key, at the top and inside an object of the sample.
      const keyed = { ...sample, 'bad\u0000key': 'x', 'half\uD800': 1 }
      const answer = await send(route, { body: JSON.stringify(keyed) })
      const problem = judge(answer, route.text === 'clean' ? 'not-5xx' : '4xx')
      if (problem) failures.push(`${describeRoute(route)} NUL in a key: ${problem}`)
    }
    expect(failures).toEqual([])
  }, 300_000)

  it('over-long text, wrong types, huge numbers and deep nesting in any field: never a 5xx; deep nesting always a 4xx', async () => {
    const failures: string[] = []
    for (const route of bodyRoutes()) {
      const sample = sampleBody(server, route)
      for (const path of [...leafPaths(sample), ['added']]) {
        for (const kind of ['overLong', 'wrongType', 'number', 'deep'] as const satisfies HostileKind[]) {
          const answer = await send(route, { body: toJson(withValue(sample, path, HOSTILE_VALUES[kind]('text'))) })
          const problem = judge(answer, kind === 'deep' ? '4xx' : 'not-5xx')
          if (problem) failures.push(`${describeRoute(route)} ${kind} in ${fieldName(path)}: ${problem}`)
        }
      }
    }
    expect(failures).toEqual([])
  }, 300_000)

  it('bodies that are not a JSON object, broken JSON, a body of NULs just below the size limit: 4xx, never a 5xx or a dropped connection', async () => {
    const nearLimit = `{"a":"${'\\u0000'.repeat(170_000)}"}`
    const bodies = ['', '[]', '"\\u0000"', 'null', '12', '{"a":', '{"a":"\\ud800"', DEEP, `{"a":${DEEP}}`, '\u0000', `[${'1,'.repeat(200_000)}1]`, nearLimit]
    const failures: string[] = []
    for (const route of bodyRoutes()) {
      for (const body of bodies) {
        const answer = await send(route, { body })
        const problem = judge(answer, 'not-5xx') ?? (body !== nearLimit && answer.status < 400 ? `answered ${answer.status}` : undefined)
        if (problem) failures.push(`${describeRoute(route)} body ${JSON.stringify(body.slice(0, 20))}: ${problem}`)
      }
    }
    expect(failures).toEqual([])
  }, 300_000)

  it('hostile path parameters and query strings on every route: never a 5xx; a declared query field with a NUL is refused by name', async () => {
    const failures: string[] = []
    const hostileParts = ['%00', '%ED%A0%80', '%F0%9F%98', 'x'.repeat(3000), '%', '..%2F..%2Fetc']
    for (const route of routes) {
      const names = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!)
      const body = route.body ? JSON.stringify(sampleBody(server, route)) : undefined
      for (const name of names) {
        for (const part of hostileParts) {
          const path = pathWith(route, (param) => (param === name ? part : paramValue(server, param)))
          const problem = judge(await send(route, { path, body }), 'not-5xx')
          if (problem) failures.push(`${describeRoute(route)} params.${name}=${part.slice(0, 12)}: ${problem}`)
        }
      }
      const declared = Object.keys((route.query as { entries?: object } | undefined)?.entries ?? {})
      const queryNames = [...new Set([...Object.keys(baseQuery(server, route)), ...declared, 'extra'])]
      for (const name of queryNames) {
        for (const part of hostileParts) {
          const problem = judge(await send(route, { rawQuery: `${name}=${part}`, body, query: Object.fromEntries(Object.entries(baseQuery(server, route)).filter(([key]) => key !== name)) }), 'not-5xx')
          if (problem) failures.push(`${describeRoute(route)} query.${name}=${part.slice(0, 12)}: ${problem}`)
        }
      }
    }
    expect(failures).toEqual([])
  }, 300_000)

  it('routes outside the table (added on the app itself) answer hostile input without a 5xx', async () => {
    const outside = [
      ['POST', '/api/v1/crm-release'], ['POST', `/api/v1/crm-release/${server.copKey}`], ['POST', '/api/v1/crm-release/%00'],
      ['OPTIONS', '/public/data-deletion/request'], ['GET', '/openapi.json'], ['GET', '/docs'], ['GET', '/docs/scalar.js'], ['POST', '/nope%00'],
    ] as const
    const failures: string[] = []
    for (const [method, path] of outside) {
      for (const body of [undefined, '{"a":"\\u0000"}', DEEP, '\u0000']) {
        const response = await fetch(`${server.url}${path}?q=%00`, { method, body: method === 'GET' ? undefined : body, headers: { 'content-type': 'application/json' } })
        await response.arrayBuffer()
        if (response.status >= 500) failures.push(`${method} ${path}: ${response.status}`)
      }
    }
    expect(failures).toEqual([])
  })

  it('names the query field that holds a NUL, on a route that refuses it', async () => {
    const held = routes.find((route) => route.path === '/admin/api/sites/:id/held')!
    const answer = await send(held, { rawQuery: 'status=held%00' })
    expect(answer.status).toBe(400)
    expect(JSON.parse(answer.text)).toEqual({ message: 'query.status: contains a NUL character', errors: ['query.status: contains a NUL character'] })
  })
})
