import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeMeta, type FakeMeta } from '../fakes/meta.ts'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'
import { startSmtp, type TestSmtp } from '../dsar/smtp.ts'

// Issue 29's "done when": revoking the Meta fake's token makes the site's members get one alert mail (through a real
// SMTP server) and the webhook one call; one "recovered" mail when Meta takes the token again. The alert job runs
// every 1.5 s here (60 worker intervals of 25 ms), so waiting a few seconds shows that nothing is sent twice.
const OWNER = 'owner@shop.example'
const ANALYST = 'analyst@shop.example'
const WEBHOOK_SECRET = 'alert-webhook-secret-0123456789'

let meta: FakeMeta
let smtp: TestSmtp
let hook: FakeServer
let app: TestApp
let key: string
let orders = 0

beforeAll(async () => {
  meta = await startFakeMeta()
  smtp = await startSmtp()
  hook = await startFakeServer(() => ({ status: 200, body: { ok: true } }))
  app = await bootTestApp({
    plugins: ['intake'],
    mail: { smtp: smtp.url, from: 'dcgate <alerts@dcgate.example>' },
    delivery: { workerIntervalMs: 25 },
    sites: [{
      id: 'shop', name: 'Shop', members: [OWNER, ANALYST],
      destinations: { meta: { pixelId: meta.pixelId, accessToken: meta.accessToken, baseUrl: meta.url } },
      alerts: { webhookUrl: `${hook.url}/dcgate-alerts`, webhookSecret: WEBHOOK_SECRET },
    }],
  })
  key = await app.createKey('shop')
}, 60_000)
afterAll(async () => {
  await app?.close()
  await Promise.all([meta?.close(), smtp?.close(), hook?.close()])
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function purchase(): Promise<string> {
  const messageId = `order-${++orders}`
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({ event: 'Purchase', messageId, properties: { value: 42, currency: 'EUR' }, context: { traits: { email: `${messageId}@example.com` } } }),
  })
  // 207: delivered inline, and a platform refused it.
  expect([202, 207]).toContain(response.status)
  return messageId
}

async function deliveryStatus(messageId: string): Promise<string> {
  await expect.poll(async () => (await sql<{ status: string }[]>(
    `select d.status from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = ? and d.status in ('sent', 'failed')`, [messageId],
  )).length, { timeout: 10_000 }).toBe(1)
  return (await sql<{ status: string }[]>(`select d.status from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = ?`, [messageId]))[0]!.status
}

describe('a revoked Meta token', () => {
  it('mails each member one alert and calls the webhook once, then one "recovered" mail when the token works again', async () => {
    expect(await deliveryStatus(await purchase())).toBe('sent')
    await pause(3_000) // a couple of rounds of the alert job: a healthy destination sends nothing
    expect(smtp.messages).toHaveLength(0)
    expect(hook.requests).toHaveLength(0)

    meta.revokeToken()
    expect(await deliveryStatus(await purchase())).toBe('failed')
    const [alert] = await smtp.waitFor(OWNER, 1)
    await smtp.waitFor(ANALYST, 1)
    expect(alert!.subject).toBe('[dcgate] Shop: meta needs attention (credentials refused)')
    expect(alert!.decoded).toContain('meta refused dcgate\'s credentials')
    expect(alert!.decoded).toContain('OAuthException 190/463')
    expect(alert!.decoded).toContain('/dashboard/sites/shop/overview#health')
    await expect.poll(() => hook.requests.length, { timeout: 5_000 }).toBe(1)
    const call = hook.requests[0]!
    expect(call.method).toBe('POST')
    expect(call.path).toBe('/dcgate-alerts')
    const payload = JSON.parse(call.body) as Record<string, unknown>
    expect(payload).toMatchObject({ type: 'delivery_health.alert', site: { id: 'shop', name: 'Shop' }, destination: 'meta', cause: 'credentials' })
    const signature = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(call.headers['x-dcgate-signature']))!
    expect(signature[2]).toBe(createHmac('sha256', WEBHOOK_SECRET).update(`${signature[1]}.${call.body}`).digest('hex'))

    // More refusals and more rounds of the job: still one alert.
    expect(await deliveryStatus(await purchase())).toBe('failed')
    await pause(4_000)
    expect(smtp.to(OWNER)).toHaveLength(1)
    expect(smtp.to(ANALYST)).toHaveLength(1)
    expect(hook.requests).toHaveLength(1)

    meta.restoreToken()
    expect(await deliveryStatus(await purchase())).toBe('sent')
    const mails = await smtp.waitFor(OWNER, 2)
    await smtp.waitFor(ANALYST, 2)
    expect(mails[1]!.subject).toBe('[dcgate] Shop: meta recovered (credentials refused)')
    await expect.poll(() => hook.requests.length, { timeout: 5_000 }).toBe(2)
    expect(JSON.parse(hook.requests[1]!.body)).toMatchObject({ type: 'delivery_health.recovered', destination: 'meta', cause: 'credentials' })

    await pause(4_000)
    expect(smtp.to(OWNER)).toHaveLength(2)
    expect(smtp.to(ANALYST)).toHaveLength(2)
    expect(smtp.messages).toHaveLength(4)
    expect(hook.requests).toHaveLength(2)
  }, 60_000)
})
