import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sleep } from '../helpers/server-process.ts'
import { startCrashServer, type CrashServer } from './crash-server.ts'

// `kill -9` between accepting a conversion and delivering it loses nothing: the delivery the inline attempt held was
// committed with the conversion, and after a restart the worker's sweep writes it as a pending row once the dead
// process's lease runs out, and sends it. The attempt the kill cut short is counted in the report.
let crash: CrashServer
let hang = true

beforeAll(async () => {
  // Answers like Meta's Graph API, but holds the next call open after `hang` is set: the delivery is in flight when we kill.
  crash = await startCrashServer(100, async () => {
    if (hang) {
      hang = false
      await sleep(60_000)
    }
    return { status: 200, body: { events_received: 1, messages: [], fbtrace_id: 'AbCdEf123' } }
  })
})
afterAll(async () => {
  await crash?.close()
})

describe('a crash mid-delivery', () => {
  it('loses nothing: after a restart the pending delivery is sent, and the cut attempt is counted', async () => {
    const { platform, server } = crash
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
    // Two attempts: the inline one the kill cut short, and the worker's after the restart.
    await expect.poll(() => crash.listed(), { timeout: 10_000 }).toEqual([['crash-order-1', 'sent', 2]])
  })

  it('counts an attempt the worker claimed when the process died', async () => {
    const { platform, server } = crash
    // A signed zapier body: stored and answered at once, then claimed and sent by the worker.
    hang = true
    expect(await crash.postZapier({ event: 'Purchase', messageId: 'crash-order-2', properties: { value: 20, currency: 'USD' }, context: { traits: { email: 'crash@example.com' } } })).toBe(200)
    await expect.poll(() => platform.requests.length, { timeout: 10_000 }).toBe(3)

    expect(await server.stop('SIGKILL')).toBeNull()
    await server.restart()
    await expect.poll(() => platform.requests.length, { timeout: 15_000, interval: 200 }).toBe(4)
    expect(JSON.parse(platform.requests[3]!.body).data[0].event_id).toBe('crash-order-2')
    await expect.poll(() => crash.listed(), { timeout: 10_000 }).toEqual([['crash-order-2', 'sent', 2], ['crash-order-1', 'sent', 2]])
  }, 60_000)
})
