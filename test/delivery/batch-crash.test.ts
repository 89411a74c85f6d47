import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sleep } from '../helpers/server-process.ts'
import { startCrashServer, type CrashServer } from './crash-server.ts'

// `kill -9` while a batch of several conversions is on its way to the platform: after a restart every one of them
// is delivered, each exactly once in the requests the platform accepted, and the cut attempt is counted for each.
const ORDERS = Array.from({ length: 6 }, (_, i) => `batch-crash-${i + 1}`)
let crash: CrashServer
let hang = true
/** The request bodies the fake answered 200 to (the ones cut by the kill never got an answer). */
const accepted: string[] = []

beforeAll(async () => {
  // Until the kill, every request hangs: the batches are in flight when the process dies.
  crash = await startCrashServer(1500, async (request) => {
    const cut = hang
    if (cut) await sleep(60_000)
    else accepted.push(request.body)
    return { status: 200, body: { events_received: (JSON.parse(request.body) as { data: unknown[] }).data.length, messages: [], fbtrace_id: 'AbCdEf123' } }
  })
})
afterAll(async () => {
  await crash?.close()
})

describe('a crash mid-batch', () => {
  it('loses none of the batch and sends none twice', async () => {
    const { platform, server } = crash
    // Signed zapier bodies are stored and answered at once; the worker claims them together and sends one batch.
    const answers = await Promise.all(ORDERS.map((messageId, i) => crash.postZapier({
      event: 'Purchase', messageId, properties: { value: 10 + i, currency: 'USD' }, context: { traits: { email: `buyer${i}@example.com` } },
    })))
    expect(answers.every((status) => status === 200)).toBe(true)
    // The worker claims what is due at its tick: all six in one request, or (on a slow machine) in a few. One request
    // per platform account is in flight at a time, so a later batch goes once the held one times out (10 s), and
    // the timed-out one may be sent again before the kill: every order is then held in one request or more.
    const cutIds = () => platform.requests.map((r) => (JSON.parse(r.body) as { data: { event_id: string }[] }).data.map((e) => e.event_id))
    await expect.poll(() => new Set(cutIds().flat()).size, { timeout: 45_000 }).toBe(ORDERS.length)
    expect([...new Set(cutIds().flat())].sort()).toEqual([...ORDERS].sort())
    expect(Math.max(...cutIds().map((ids) => ids.length))).toBeGreaterThan(1)

    expect(await server.stop('SIGKILL')).toBeNull()
    hang = false
    await server.restart()

    // Each sent, its cut attempt counted: two attempts, or more for an order whose held request timed out first.
    await expect.poll(async () => (await crash.listed()).map(([id, status, attempts]) => [id, status, Math.min(attempts, 2)]).sort(), { timeout: 30_000, interval: 250 })
      .toEqual(ORDERS.map((id) => [id, 'sent', 2]).sort())
    const delivered = accepted.flatMap((body) => (JSON.parse(body) as { data: { event_id: string }[] }).data.map((e) => e.event_id))
    expect(delivered.sort()).toEqual([...ORDERS].sort())
  }, 120_000)
})
