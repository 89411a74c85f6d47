import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RouteDefinition } from '../../core/http/routes.ts'
import { authHeaders, baseQuery, leafPaths, paramValue, pathWith, sampleBody, startHostileServer, withValue, type HostileServer } from './support.ts'
import { recordPatterns, slowRuns, type SeenPattern } from './regex-time.ts'

// Every regular expression a request makes the server run, found by walking the route table (so a new route or
// plugin is covered without a change here) with each route's sample input and with delimiter-laden text in each of
// its fields, short and long. Each pattern that request data of more than 4 KB reached is timed on 100 KB inputs
// built from its own characters, and must finish within 50 ms: a backtracking pattern on request data lets one
// request freeze every site (the Segment underscore trim did). A pattern only ever given shorter text sits behind a
// length check, where even a quadratic one finishes in milliseconds.

type AnyRoute = RouteDefinition<unknown, unknown, unknown>

/** Text that sends a value down the branches that look for structure: separators, an address, a URL, a query. */
const DELIMITED = 'a_b c:d/e@f.g?h=i&j#k;l,m"n\\o-p+q%20r\t_'
/** Text reaching a pattern beyond this length was not cut to a field's limit first. */
const UNBOUNDED = 4096
/** Long values: within Segment's 32 KB a message, and past any field limit. */
const LONG = [`x${'_-'.repeat(15_000)}x`, `x${DELIMITED.repeat(2_600)}x`]

let server: HostileServer
let seen: Map<string, SeenPattern>

beforeAll(async () => {
  server = await startHostileServer()
  let current: string | undefined
  const recording = recordPatterns(() => current)
  try {
    for (const route of server.app.dcgate.context.routes.list()) {
      current = `${route.method} ${route.path}`
      for (const body of bodiesFor(route)) await send(route, body)
    }
    // Work a request leaves behind (the capture flush, the delivery worker) runs on its data too.
    current = 'after the requests'
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  finally {
    recording.stop()
  }
  seen = recording.seen
}, 300_000)
afterAll(() => server?.close())

function bodiesFor(route: AnyRoute): (string | undefined)[] {
  if (route.method === 'GET' || route.method === 'DELETE') return [undefined]
  const sample = sampleBody(server, route)
  return [JSON.stringify(sample), ...leafPaths(sample).flatMap((path) => [DELIMITED, ...LONG].map((value) => JSON.stringify(withValue(sample, path, value))))]
}

async function send(route: AnyRoute, body: string | undefined): Promise<void> {
  const query = new URLSearchParams(baseQuery(server, route)).toString()
  const path = pathWith(route, (name) => paramValue(server, name))
  const response = await fetch(`${server.url}${path}${query ? `?${query}` : ''}`, {
    method: route.method,
    headers: { ...authHeaders(server, route), ...(body === undefined ? {} : { 'content-type': 'application/json' }), origin: 'https://shop.example' },
    body,
  })
  await response.arrayBuffer()
}

describe('regular expressions applied to request data, on every route of the route table', () => {
  it('are found: the walk sees the patterns of the routes, plugins included', () => {
    const where = new Set([...seen.values()].flatMap((pattern) => [...pattern.where]))
    expect(seen.size).toBeGreaterThan(10)
    expect([...seen.values()].filter((pattern) => pattern.longest > UNBOUNDED).length).toBeGreaterThan(3)
    for (const route of ['POST /collect', 'POST /api/v1/conversions/automation', 'POST /v1/batch']) expect([...where]).toContain(route)
  })

  it('each runs within 50 ms on 100 KB built from its character classes and delimiters', async () => {
    const slow = []
    for (const pattern of [...seen.values()].filter((seenPattern) => seenPattern.longest > UNBOUNDED)) {
      for (const run of await slowRuns(pattern, 50)) slow.push(`${run.pattern} took ${run.ms} ms on ${run.input} (run by ${[...pattern.where].slice(0, 3).join(', ')})`)
    }
    expect(slow).toEqual([])
  }, 600_000)
})
