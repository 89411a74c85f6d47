import * as v from 'valibot'
import { defineAdPlatform } from '../../core/registry.ts'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'

/**
 * A minimal platform for pipeline tests (the real adapters have their own suites): one JSON request
 * per batch, 2xx sent, 4xx rejected with the platform's message, 429/5xx retried.
 */
export const testPlatform = defineAdPlatform({
  name: 'testads',
  apiVersion: 'v1',
  options: v.object({ baseUrl: v.pipe(v.string(), v.url()), token: v.string() }),
  maxBatchSize: 10,
  maxEventAgeDays: 7,
  toRequest: (events, options) => ({
    url: `${options.baseUrl}/v1/events`,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'authorization': `Bearer ${options.token}` },
    body: JSON.stringify({ events: events.map((e) => ({ id: e.messageId, name: e.standardEvent, time: Math.floor(e.occurredAt.getTime() / 1000), value: e.value, currency: e.currency, email: e.identity.email, clickIds: e.clickIds, ip: e.ip })) }),
  }),
  parseResponse: (response, events) => {
    const message = (() => {
      try {
        return (JSON.parse(response.body) as { message?: string }).message ?? response.body
      }
      catch {
        return response.body
      }
    })()
    if (response.status < 300) return events.map(() => ({ status: 'sent' as const }))
    if (response.status === 429 || (response.status >= 500 && response.status !== 501)) {
      const after = Number(response.headers.get('retry-after'))
      return events.map(() => ({ status: 'retry' as const, message, retryAfterMs: after ? after * 1000 : undefined }))
    }
    return events.map(() => ({ status: 'rejected' as const, message }))
  },
})

export function startFakeTestPlatform(): Promise<FakeServer> {
  return startFakeServer((request) => request.headers.authorization === 'Bearer good'
    ? { status: 200, body: { received: (JSON.parse(request.body) as { events: unknown[] }).events.length } }
    : { status: 401, body: { message: 'Invalid access token' } })
}
