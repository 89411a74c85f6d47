import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, health, type TestApp } from '../helpers/app.ts'
import { onRedis } from '../helpers/database.ts'
import { startFreezingProxy, type FreezingProxy } from './freezing-proxy.ts'

// Redis that stops answering without closing its connection: a key check that needs it answers 500 within the
// command timeout instead of hanging, and once Redis answers again the same app checks keys without a restart.
describe.skipIf(!onRedis)('a Redis that stops answering (behind a freezing proxy)', () => {
  let proxy: FreezingProxy
  let app: TestApp
  let key: string

  beforeAll(async () => {
    proxy = await startFreezingProxy(process.env.REDIS_URL!)
    app = await bootTestApp({ storage: { url: proxy.url, commandTimeoutMs: 1000 } }, { redis: false })
    key = await app.createKey()
  })
  afterAll(async () => {
    proxy?.thaw()
    await app?.close()
    await proxy?.close()
  })

  it('answers 500 fast while frozen, and checks keys again after the thaw', async () => {
    expect((await health(app, key)).status).toBe(200)
    proxy.freeze()
    for (let round = 0; round < 2; round++) {
      const started = performance.now()
      const response = await health(app, key)
      expect(performance.now() - started).toBeLessThan(5000)
      expect(response.status).toBe(500)
      expect(await response.json()).toEqual({ message: 'API key validation failed' })
    }
    proxy.thaw()
    await expect.poll(async () => (await health(app, key)).status, { timeout: 20_000, interval: 250 }).toBe(200)
  })
})
