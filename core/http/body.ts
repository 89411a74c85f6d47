import type { IncomingMessage } from 'node:http'
import type { H3Event, Middleware } from 'h3'
import { apiError } from './errors.ts'

const tooLarge = (limit: number) => apiError(413, { message: `Request body size exceeds the limit of ${limit} bytes` })

/**
 * A declared Content-Length over the limit is refused before anything is read. A streamed body is counted
 * where it is read (readRawBody). h3's bodyLimit did both by wrapping every request body in web streams,
 * which showed as the largest part of reading a /collect body in the capture benchmark's profile.
 */
export function declaredBodyLimit(limit: number): Middleware {
  return (event) => {
    const declared = event.req.headers.get('content-length')
    if (declared && Number(declared) > limit) throw tooLarge(limit)
  }
}

/** The request body's bytes, at most `limit` (413 beyond). Reads Node's request stream directly when there is one. */
export async function readRawBody(event: H3Event, limit: number): Promise<Uint8Array> {
  const node = (event.req as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req
  if (node) return readNodeStream(node, limit)
  const stream = event.req.body
  if (!stream) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > limit) throw tooLarge(limit)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** The body as UTF-8 text, within the limit. */
export async function readTextBody(event: H3Event, limit: number): Promise<string> {
  const bytes = await readRawBody(event, limit)
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
}

function readNodeStream(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        req.removeAllListeners('data')
        req.resume()
        reject(tooLarge(limit))
        return
      }
      chunks.push(chunk)
    })
    // `on`, not `once`: a request ends once, and once's wrapper was an allocation per request.
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
    req.on('error', reject)
  })
}
