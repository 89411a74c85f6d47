/**
 * The body of a Segment-style request: at most the route's limit, gzip-decoded when the client compressed it
 * (RudderStack's Node SDK gzips every batch by default), parsed as one JSON object. Every failure is a 4xx.
 */
import { gunzip } from 'node:zlib'
import { promisify } from 'node:util'
import type { H3Event } from 'h3'
import { readRawBody } from '../../core/http/body.ts'
import { apiError } from '../../core/http/errors.ts'
import { inspectJson } from '../../core/http/text.ts'

const gunzipAsync = promisify(gunzip)
const utf8 = new TextDecoder('utf-8', { fatal: true })

const tooLarge = (limit: number) => apiError(413, { message: `Request body size exceeds the limit of ${limit} bytes` })
const invalid = (problem: string) => apiError(400, { message: problem, errors: [problem] })

export async function readSegmentBody(event: H3Event, limit: number): Promise<Record<string, unknown>> {
  const raw = await readRawBody(event, limit)
  const bytes = await decoded(raw, event.req.headers.get('content-encoding'), limit)
  let text: string
  try {
    text = utf8.decode(bytes)
  }
  catch {
    throw invalid('body: must be UTF-8 text')
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  }
  catch {
    throw apiError(400, { message: 'Invalid JSON body', errors: ['body: must be valid JSON'] })
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('body: must be a JSON object')
  // Only the depth here: text PostgreSQL cannot store is looked for per message, so one bad message spares the rest.
  const tooDeep = inspectJson(body, { strings: false })
  if (tooDeep.length) throw apiError(400, { message: tooDeep.join('; '), errors: tooDeep })
  return body as Record<string, unknown>
}

/** The bytes as sent, or gunzipped; the decoded size is held to the same limit (a small zip bomb stays small). */
async function decoded(raw: Uint8Array, encoding: string | null, limit: number): Promise<Uint8Array> {
  const name = encoding?.trim().toLowerCase()
  if (!name || name === 'identity') return raw
  if (name !== 'gzip' && name !== 'x-gzip') throw apiError(415, { message: `Content-Encoding "${name.slice(0, 32)}" is not supported; send gzip or no encoding` })
  try {
    return await gunzipAsync(raw, { maxOutputLength: limit })
  }
  catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limit)
    throw invalid('body: is not valid gzip')
  }
}
