/**
 * What the fakes and their tests share around startFakeServer: reading a recorded request, building a reply,
 * sending an adapter's request. What a platform checks and answers stays in its own fake.
 */
import { isObject, parseJson, parseJsonObject } from '../../adapters/shared/helpers.ts'
import type { PlatformRequest, PlatformResponse } from '../../core/delivery/types.ts'
import type { FakeReply, RecordedRequest } from './server.ts'

/** Plain JSON reading is no platform's rule, so the fakes use the adapters' own. */
export { isObject, parseJson }

const SHA256_HEX = /^[0-9a-f]{64}$/

/**
 * What the platforms take as hashed: 64 lower-case hex characters. Written apart from the adapters' isSha256Hex on
 * purpose: a fake that reused the adapters' check could not catch a mistake in it.
 */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value)
}

/** The request's body when it is a JSON object, else undefined. */
export function jsonBody(request: RecordedRequest): Record<string, any> | undefined {
  return parseJsonObject(request.body)
}

/** The token of `Authorization: Bearer <token>` (the scheme is case-insensitive, RFC 9110 §11.1). */
export function bearer(request: RecordedRequest): string | undefined {
  return /^Bearer (\S+)$/i.exec(String(request.headers.authorization ?? ''))?.[1]
}

/** A reply, with a `headers` key only when there are headers. */
export function reply(status: number, body: unknown, headers?: Record<string, string>): FakeReply {
  return { status, body, ...(headers ? { headers } : {}) }
}

/** Sends an adapter's request (plus extra headers, e.g. from authorize) and returns what parseResponse takes. */
export async function send(request: PlatformRequest, headers: Record<string, string> = {}): Promise<PlatformResponse> {
  const response = await fetch(request.url, { method: request.method, headers: { ...request.headers, ...headers }, body: request.method === 'GET' ? undefined : request.body })
  return { status: response.status, headers: response.headers, body: await response.text() }
}
