import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'
import { killAllChildren, sleep, startServerProcess, type ServerProcess } from '../helpers/server-process.ts'

// `kill -9` between accepting a conversion and delivering it loses nothing: the outbox row was committed
// with the conversion, and after a restart the worker takes it over once the dead process's lease runs out.
let platform: FakeServer
let server: ServerProcess
let hang = true

beforeAll(async () => {
  // Answers like Meta's Graph API, but holds the first call open: the delivery is in flight when we kill.
  platform = await startFakeServer(async () => {
    if (hang) {
      hang = false
      await sleep(60_000)
    }
    return { status: 200, body: { events_received: 1, messages: [], fbtrace_id: 'AbCdEf123' } }
  })
  server = await startServerProcess({
    config: `export default {
      plugins: ['intake', 'export'],
      delivery: { leaseSeconds: 2, workerIntervalMs: 100 },
      sites: [{ id: 'demo', name: 'Demo', destinations: { meta: { pixelId: '1234567890', accessToken: 'token', baseUrl: '${platform.url}' } } }],
    }\n`,
  })
})
afterAll(async () => {
  await server?.close()
  killAllChildren()
  await platform?.close()
})

describe('a crash mid-delivery', () => {
  it('loses nothing: after a restart the pending delivery is sent', async () => {
    const created = await server.cli(['keys', 'create', '--site', 'demo', '--name', 'crash', '--json'])
    const { key } = JSON.parse(created.stdout) as { key: string }
    const inFlight = fetch(`${server.url}/api/v1/conversions/automation`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
      body: JSON.stringify({ event: 'Purchase', messageId: 'crash-order-1', properties: { value: 10, currency: 'USD' }, context: { traits: { email: 'crash@example.com' } } }),
    }).catch((error: unknown) => error)
    await expect.poll(() => platform.requests.length, { timeout: 10_000 }).toBe(1)

    expect(await server.stop('SIGKILL')).toBeNull()
    expect(await inFlight).toBeInstanceOf(Error)

    await server.restart()
    await expect.poll(() => platform.requests.length, { timeout: 15_000, interval: 200 }).toBe(2)
    expect(JSON.parse(platform.requests[1]!.body).data[0].event_id).toBe('crash-order-1')
    await expect.poll(async () => {
      const listed = await server.cli(['deliveries', 'list', '--site', 'demo', '--json'])
      return (JSON.parse(listed.stdout) as { message_id: string, status: string }[]).map((d) => [d.message_id, d.status])
    }, { timeout: 10_000 }).toEqual([['crash-order-1', 'sent']])
  })
})
