import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'
import { testPlatform } from '../delivery/test-platform.ts'
import { startSmtp, type TestSmtp } from '../dsar/smtp.ts'

// The failure-rate cause through the alert job: a platform that refuses the events themselves (not the credentials)
// for more than alerts.failureRate of the window's deliveries alerts once; enough later successes bring the share to
// the threshold and send "recovered". Mail to the addresses listed in alerts.email, not the members.
const OPS = 'ops@shop.example'
const MEMBER = 'member@shop.example'

let platform: FakeServer
let smtp: TestSmtp
let hook: FakeServer
let app: TestApp
let key: string
let refuse = true
let sent = 0

beforeAll(async () => {
  platform = await startFakeServer(() => refuse ? { status: 400, body: { message: 'Invalid parameter: event_time is too old' } } : { status: 200, body: { received: 1 } })
  smtp = await startSmtp()
  hook = await startFakeServer(() => ({ status: 200, body: {} }))
  app = await bootTestApp({
    plugins: ['intake'],
    mail: { smtp: smtp.url },
    delivery: { workerIntervalMs: 25 },
    sites: [{
      id: 'shop', name: 'Shop', members: [MEMBER],
      destinations: { testads: { baseUrl: platform.url, token: 'good' } },
      alerts: { email: [OPS], webhookUrl: hook.url, failureRate: 0.25, windowMinutes: 30 },
    }],
  }, { adapters: [testPlatform] })
  key = await app.createKey('shop')
}, 60_000)
afterAll(async () => {
  await app?.close()
  await Promise.all([platform?.close(), smtp?.close(), hook?.close()])
})

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function purchases(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const response = await app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
      body: JSON.stringify({ event: 'Purchase', messageId: `order-${++sent}`, properties: { value: 10, currency: 'EUR' }, context: { traits: { email: `buyer${sent}@example.com` } } }),
    })
    expect([202, 207]).toContain(response.status)
  }
}

describe('the failure-rate alert', () => {
  it('waits for enough deliveries, alerts once above the share, and recovers once the share is back at the threshold', async () => {
    await purchases(4)
    await pause(3_500) // 4 of 4 failed, but fewer than 5 ended: no alert
    expect(smtp.messages).toHaveLength(0)

    await purchases(1)
    const [alert] = await smtp.waitFor(OPS, 1)
    expect(alert!.subject).toBe('[dcgate] Shop: testads needs attention (too many failures)')
    expect(alert!.decoded).toContain('100% of 5 deliveries to testads in the last 30 minutes failed (the alert threshold is 25%)')
    expect(alert!.decoded).toContain('Invalid parameter: event_time is too old')
    await expect.poll(() => hook.requests.length, { timeout: 5_000 }).toBe(1)
    expect(JSON.parse(hook.requests[0]!.body)).toMatchObject({ type: 'delivery_health.alert', cause: 'failure-rate', destination: 'testads' })
    expect(hook.requests[0]!.headers['x-dcgate-signature']).toBeUndefined() // no webhookSecret

    refuse = false
    await purchases(10) // 5 of 15 failed: 33%, still above
    await pause(3_500)
    expect(smtp.messages).toHaveLength(1)
    await purchases(5) // 5 of 20: 25%, not above
    const mails = await smtp.waitFor(OPS, 2)
    expect(mails[1]!.subject).toBe('[dcgate] Shop: testads recovered (too many failures)')
    await expect.poll(() => hook.requests.length, { timeout: 5_000 }).toBe(2)
    expect(smtp.to(MEMBER)).toHaveLength(0)
  }, 90_000)
})
