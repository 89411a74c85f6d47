import { HTTPError, type H3, type H3Event, type Middleware } from 'h3'
import * as v from 'valibot'
import { formatIssues } from '../config/issues.ts'
import { apiError } from './errors.ts'
import { readTextBody } from './body.ts'
import { cleanJsonText, inspectJson, isStorableRecord, mayHoldUnstorableText, nestsTooDeep, toStorableRecord, type TextPolicy } from './text.ts'

export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
/** `key`: x-dc-key private key; `admin`: admin bearer token on loopback; `none`: public. */
export type RouteAuth = 'none' | 'key' | 'admin'
type Schema<T = unknown> = v.GenericSchema<unknown, T>
type InputPart = 'body' | 'query' | 'params'

export interface RouteInput<B, Q, P> { body: B, query: Q, params: P }

export interface RouteDefinition<B = undefined, Q = undefined, P = undefined> {
  method: RouteMethod
  /** h3 route pattern, `:name` for a parameter. */
  path: string
  auth: RouteAuth
  summary: string
  description?: string
  tags?: string[]
  body?: Schema<B>
  /**
   * A hand check for a hot route: returns the body when it certainly satisfies `body` (as the schema would output
   * it), undefined to let the schema decide. It must never accept what the schema refuses (test it so).
   */
  plainBody?: (input: unknown) => B | undefined
  query?: Schema<Q>
  params?: Schema<P>
  /** Response schemas by status, for the OpenAPI document. */
  responses?: Record<number, Schema | { description: string, schema?: Schema }>
  /** Runs after authentication and before the input is read (e.g. 402 for a paused site). */
  precheck?: (event: H3Event) => void
  /**
   * Text PostgreSQL cannot store (a NUL, an unpaired surrogate) in the body, query or params: `refuse` (default)
   * answers the invalid-input 4xx naming the field; `clean` removes NULs and makes surrogates U+FFFD, for senders
   * that cannot fix their payload (the tracking script). Checked before `plainBody` and the schemas.
   */
  text?: TextPolicy
  /** Overrides the default 400 for invalid input (e.g. 422 on the automation route). */
  invalid?: (problems: string[], part: InputPart) => HTTPError
  handler: (event: H3Event, input: RouteInput<B, Q, P>) => unknown
}

export interface RouteTable {
  add: <B = undefined, Q = undefined, P = undefined>(route: RouteDefinition<B, Q, P>) => void
  list: () => readonly RouteDefinition<unknown, unknown, unknown>[]
}

/**
 * Every route declares its input schemas once, here: they validate requests and feed /openapi.json.
 * `guards` supplies the middleware each auth kind runs before the handler.
 */
export function createRouteTable(app: H3, guards: Record<Exclude<RouteAuth, 'none'>, Middleware>, options: { bodyLimit: number }): RouteTable {
  const routes: RouteDefinition<unknown, unknown, unknown>[] = []
  return {
    add(route) {
      const definition = route as RouteDefinition<unknown, unknown, unknown>
      routes.push(definition)
      const middleware = definition.auth === 'none' ? [] : [guards[definition.auth]]
      app.on(definition.method, definition.path, toHandler(definition, options.bodyLimit), { middleware })
    },
    list: () => routes,
  }
}

function toHandler(route: RouteDefinition<unknown, unknown, unknown>, bodyLimit: number) {
  const needsInput = route.body || route.query || route.params
  if (!needsInput && !route.precheck) return (event: H3Event) => route.handler(event, { body: undefined, query: undefined, params: undefined })
  return async (event: H3Event) => {
    route.precheck?.(event)
    const params = route.params ? parse(route, 'params', storableRecord(route, 'params', event.context.params ?? {})) : undefined
    const query = route.query ? parse(route, 'query', storableRecord(route, 'query', Object.fromEntries(event.url.searchParams))) : undefined
    const raw = route.body ? await readJson(event, route, bodyLimit) : undefined
    // The hand check accepts only the shapes it knows, none deep; anything else is measured before the schema walks it.
    const body = route.body ? route.plainBody?.(raw) ?? parse(route, 'body', shallowEnough(route, raw)) : undefined
    return route.handler(event, { body, query, params })
  }
}

function refuse(route: RouteDefinition<unknown, unknown, unknown>, part: InputPart, problems: string[]): never {
  throw route.invalid?.(problems, part) ?? apiError(400, { message: problems.join('; '), errors: problems })
}

/** A query or the path parameters, cleaned or refused when they hold text PostgreSQL cannot store. */
function storableRecord(route: RouteDefinition<unknown, unknown, unknown>, part: 'query' | 'params', input: Record<string, string>): Record<string, string> {
  if (route.text === 'clean') return toStorableRecord(input)
  if (isStorableRecord(input)) return input
  const problems = inspectJson(input, { strings: true, prefix: part })
  return problems.length ? refuse(route, part, problems) : input
}

function shallowEnough(route: RouteDefinition<unknown, unknown, unknown>, input: unknown): unknown {
  if (!nestsTooDeep(input)) return input
  const problems = inspectJson(input, { strings: false })
  return problems.length ? refuse(route, 'body', problems) : input
}

function parse(route: RouteDefinition<unknown, unknown, unknown>, part: InputPart, input: unknown): unknown {
  // Every body is a JSON object; say so plainly rather than listing the missing fields of an array or a string.
  if (part === 'body' && (typeof input !== 'object' || input === null || Array.isArray(input))) refuse(route, part, ['body: must be a JSON object'])
  const result = v.safeParse(route[part]!, input)
  if (result.success) return result.output
  const problems = formatIssues(result.issues, part === 'body' ? '' : part).map((p) => (p.startsWith('Invalid type') ? `${part}: must be a JSON object` : p))
  return refuse(route, part, problems)
}

/**
 * The body, parsed. Text that may hold a NUL or an unpaired surrogate (a cheap test of the raw JSON, so the common
 * body is never walked) is cleaned before parsing, or parsed and walked to name the fields that hold one.
 */
async function readJson(event: H3Event, route: RouteDefinition<unknown, unknown, unknown>, bodyLimit: number): Promise<unknown> {
  const text = await readTextBody(event, bodyLimit)
  if (text.trim() === '') return undefined
  const suspect = mayHoldUnstorableText(text)
  const clean = route.text === 'clean'
  let value: unknown
  try {
    value = JSON.parse(suspect && clean ? cleanJsonText(text) : text)
  }
  catch {
    // A raw NUL makes JSON invalid; where text is cleaned, it is removed like an escaped one (looked for only here).
    value = clean && text.includes('\0') ? parseOrUndefined(cleanJsonText(text)) : undefined
    if (value === undefined) {
      const problems = ['body: must be valid JSON']
      throw route.invalid?.(problems, 'body') ?? apiError(400, { message: 'Invalid JSON body', errors: problems })
    }
  }
  if (suspect && !clean) {
    const problems = inspectJson(value, { strings: true })
    if (problems.length) refuse(route, 'body', problems)
  }
  return value
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text)
  }
  catch {
    return undefined
  }
}
