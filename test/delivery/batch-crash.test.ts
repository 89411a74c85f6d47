import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'
import { killAllChildren, sleep, startServerProcess, type ServerProcess } from '../helpers/server-process.ts'

// `kill -9` while a batch of several conversions is on its way to the platform: after a restart every one of them
// is delivered, each exactly once in the requests the platform accepted, and the cut attempt is counted for each.
const ZAPIER_SECRET = 'batch-crash-zapier-secret-0123456789'
const ORDERS = Array.from({ length: 6 }, (_, i) => `batch-crash-${i + 1}`)
let platform: FakeServer
let server: ServerProcess
let hang = true
/** The request bodies the fake answered 200 to (the one cut by the kill never got an answer). */
const accepted: string[] = []

beforeAll(async () => {
  // Until the kill, every request hangs: the batches are in flight when the process dies.
  platform = await startFakeServer(async (request) => {
    const cut = hang
    if (cut) await sleep(60_000)
    else accepted.push(request.body)
    return { status: 200, body: { events_received: (JSON.parse(request.body) as { data: unknown[] }).data.length, messages: [], fbtrace_id: 'AbCdEf123' } }
  })
  server = await startServerProcess({
    config: `export default {
      plugins: ['intake', 'export'],
      delivery: { leaseSeconds: 2, workerIntervalMs: 1500 },
      sites: [{ id: 'demo', name: 'Demo', destinations: { meta: { pixelId: '1234567890', accessToken: 'token', baseUrl: '${platform.url}' } }, sources: { zapier: { secret: '${ZAPIER_SECRET}' } } }],
    }\n`,
  })
})
afterAll(async () => {
  await server?.close()
  killAllChildren()
  await platform?.close()
})

describe('a crash mid-batch', () => {
  it('loses none of the batch and sends none twice', async () => {
    const copKey = (JSON.parse((await server.cli(['sites', 'list', '--json'])).stdout) as { id: string, cop_key: string }[]).find((s) => s.id === 'demo')!.cop_key
    // Signed zapier bodies are stored and answered at once; the worker claims them together and sends one batch.
    const answers = await Promise.all(ORDERS.map(async (messageId, i) => {
      const raw = JSON.stringify({ event: 'Purchase', messageId, properties: { value: 10 + i, currency: 'USD' }, context: { traits: { email: `buyer${i}@example.com` } } })
      const signature = `sha256=${createHmac('sha256', ZAPIER_SECRET).update(raw).digest('hex')}`
      return (await fetch(`${server.url}/api/v1/conversions/zapier/${copKey}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-dcgate-signature': signature }, body: raw })).status
    }))
    expect(answers.every((status) => status === 200)).toBe(true)
    // The worker claims what is due at its tick: all six in one request, or (on a slow machine) in a few.
    const cutIds = () => platform.requests.map((r) => (JSON.parse(r.body) as { data: { event_id: string }[] }).data.map((e) => e.event_id))
    await expect.poll(() => cutIds().flat().length, { timeout: 15_000 }).toBe(ORDERS.length)
    expect(cutIds().flat().sort()).toEqual([...ORDERS].sort())
    expect(Math.max(...cutIds().map((ids) => ids.length))).toBeGreaterThan(1)

    expect(await server.stop('SIGKILL')).toBeNull()
    hang = false
    await server.restart()

    await expect.poll(() => listed(), { timeout: 20_000, interval: 250 }).toEqual(ORDERS.map((id) => [id, 'sent', 2]).sort())
    const delivered = accepted.flatMap((body) => (JSON.parse(body) as { data: { event_id: string }[] }).data.map((e) => e.event_id))
    expect(delivered.sort()).toEqual([...ORDERS].sort())
  }, 60_000)
})

async function listed(): Promise<[string, string, number][]> {
  const { stdout } = await server.cli(['deliveries', 'list', '--site', 'demo', '--json'])
  return (JSON.parse(stdout) as { message_id: string, status: string, attempts: number }[]).map((d): [string, string, number] => [d.message_id, d.status, d.attempts]).sort()
}
