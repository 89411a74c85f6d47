import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { definePlugin } from '../../core/plugin.ts'
import { bootTestApp, health, type TestApp } from '../helpers/app.ts'

function errorRecorder() {
  const errors: string[] = []
  const plugin = definePlugin({ name: 'recorder', setup: ({ hooks }) => void hooks.hook('error', (_e, context) => void errors.push(context.source)) })
  return { errors, plugin }
}

describe('when the database fails', () => {
  let app: TestApp
  const recorder = errorRecorder()
  beforeAll(async () => {
    app = await bootTestApp({ plugins: ['export', recorder.plugin] })
  })
  afterAll(() => app?.close())

  it('answers 500 "API key validation failed" for keys it cannot check, keeps serving, and recovers', async () => {
    const cached = await app.createKey('demo', 'cached')
    const unchecked = await app.createKey('demo', 'unchecked')
    expect((await health(app, cached)).status).toBe(200)

    const { orm } = app.dcgate.database
    await orm.close(true)
    const failed = await health(app, unchecked)
    expect(failed.status).toBe(500)
    expect(await failed.json()).toEqual({ message: 'API key validation failed' })
    expect(recorder.errors).toContain('request')

    // The server keeps serving: a cached key still works, and so do routes that need no database.
    expect((await health(app, cached)).status).toBe(200)
    expect((await app.request('/openapi.json')).status).toBe(200)

    await orm.connect()
    expect((await health(app, unchecked)).status).toBe(200)
  })
})

describe('when the cache fails', () => {
  let app: TestApp
  let closedPort: number
  beforeAll(async () => {
    closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number }
        server.close(() => resolve(port))
      })
    })
    app = await bootTestApp({ storage: { url: `redis://127.0.0.1:${closedPort}` } }, { redis: false })
  })
  afterAll(() => app?.close())

  it('answers 500 "API key validation failed" rather than hanging or crashing', async () => {
    const response = await health(app, `dcp_${'a'.repeat(43)}`)
    expect(response.status).toBe(500)
    expect(await response.json()).toEqual({ message: 'API key validation failed' })
    expect((await app.request('/openapi.json')).status).toBe(200)
  })
})
