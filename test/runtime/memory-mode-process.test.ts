import { afterAll, describe, expect, it } from 'vitest'
import { MEMORY_MODE_POLICY } from '../../core/memory-mode.ts'
import { sleep, startServerProcess, type ServerProcess } from '../helpers/server-process.ts'

// Issue 30: a real `dcgate start` on Node 24 turns V8's memory saver off while it is busy and back on once idle
// (core/memory-mode.ts); GET /metrics says which. Node 22 has no such mode: there the gauge stays 0.
const NODE_24 = Number(process.versions.node.split('.')[0]) >= 24

describe.skipIf(!NODE_24)('dcgate start under load and after it', () => {
  let server: ServerProcess | undefined
  afterAll(async () => {
    await server?.close()
  })

  const saverGauge = async () => {
    const text = await fetch(`${server!.url}/metrics`).then((response) => response.text())
    return Number(/^dcgate_memory_saver_mode (\S+)$/m.exec(text)?.[1])
  }
  // Asked every 2 s: a scrape reads the outbox gauges from the database, and asked four times a second on a loaded
  // machine it kept the server above the idle line by itself.
  const until = async (value: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      if (await saverGauge() === value) return true
      await sleep(2_000)
    }
    return false
  }

  it('runs without the memory saver while busy and with it again after the idle seconds', async () => {
    server = await startServerProcess()
    expect(await saverGauge()).toBe(1)
    // Twenty clients asking for the OpenAPI document back to back keep the event loop busy.
    let busy = true
    const load = Promise.all(Array.from({ length: 20 }, async () => {
      while (busy) await fetch(`${server!.url}/openapi.json`).then((response) => response.arrayBuffer())
    }))
    const wentOff = await until(0, 10_000)
    busy = false
    await load
    expect(wentOff).toBe(true)
    const idleMs = MEMORY_MODE_POLICY.idleSamples * MEMORY_MODE_POLICY.sampleMs
    // One idle window, and one more should the first include the collections that follow the load.
    expect(await until(1, 2 * idleMs + 30_000)).toBe(true)
  }, 180_000)
})
