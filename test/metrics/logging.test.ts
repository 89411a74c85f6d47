import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createConsola } from 'consola'
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest'
import { bootTestApp, DEMO_SITE, type TestApp } from '../helpers/app.ts'
import { createJsonReporter } from '../../core/logger.ts'
import { failingPlugin } from '../helpers/failing-plugin.ts'
import { resolveConfig } from '../../core/config/load.ts'
import { startServer } from '../../core/server.ts'

// LOG_FORMAT=json: one JSON object a line, and each request an id (the caller's when sane) that its answer and its
// lines carry. HOST: the address the server listens on.
const lines: string[] = []
const logged = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>)
let app: TestApp

const failing = failingPlugin('/test/fails')

beforeAll(async () => {
  const logger = createConsola({ level: 4, reporters: [createJsonReporter((line) => void lines.push(line))] })
  app = await bootTestApp({ plugins: ['intake', failing] }, { logger })
})
afterAll(() => app?.close())

describe('LOG_FORMAT=json', () => {
  it('writes every line as one JSON object', () => {
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) {
      expect(line.endsWith('\n')).toBe(true)
      expect(line.trimEnd()).not.toContain('\n')
      expect(JSON.parse(line)).toMatchObject({ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), level: expect.any(String), msg: expect.any(String) })
    }
  })

  it('echoes a sane x-request-id and logs the request line with it and the route pattern', async () => {
    const response = await app.request('/livez', { headers: { 'x-request-id': 'lb-7f3a9c21.0001' } })
    expect(response.headers.get('x-request-id')).toBe('lb-7f3a9c21.0001')
    expect(logged()).toContainEqual(expect.objectContaining({ level: 'debug', msg: 'request', requestId: 'lb-7f3a9c21.0001', method: 'GET', route: '/livez', status: '200' }))
  })

  it('makes an id when none or a strange one is sent, on error answers too', async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
    for (const sent of [undefined, 'short', 'has space in it', '<script>alert(1)</script>', 'x'.repeat(129)]) {
      const response = await app.request('/no/such/route', { headers: sent === undefined ? {} : { 'x-request-id': sent } })
      expect(response.status).toBe(404)
      expect(response.headers.get('x-request-id'), String(sent)).toMatch(uuid)
    }
    const invalid = await app.request('/api/v1/conversions/automation', { method: 'POST', headers: { 'x-dc-key': 'dcp_wrong' } })
    expect(invalid.status).toBe(401)
    expect(invalid.headers.get('x-request-id')).toMatch(uuid)
  })

  it('puts the request id on the error line of a failed request', async () => {
    const response = await app.request('/test/fails', { headers: { 'x-request-id': 'trace-0123456789' } })
    expect(response.status).toBe(500)
    expect(await response.json()).toEqual({ message: 'Internal server error' })
    expect(response.headers.get('x-request-id')).toBe('trace-0123456789')
    expect(logged()).toContainEqual(expect.objectContaining({
      level: 'error', requestId: 'trace-0123456789', msg: '[request] /test/fails', err: expect.objectContaining({ message: 'the handler failed' }),
    }))
  })
})

describe('HOST', () => {
  it('is the address the server listens on', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'dcgate-host-'))
    const config = resolveConfig({ sites: [DEMO_SITE], dataDir, server: { port: 0 }, plugins: [] }, { HOST: '127.0.0.1' })
    expect(config.server.host).toBe('127.0.0.1')
    const running = await startServer(config, {
      banner: false, inMemoryDatabase: true, embeddedTemplate: new Blob([readFileSync(inject('pgliteTemplate'))]),
      logger: createConsola({ level: -999 }), builtInPlugins: {}, adapters: [],
    })
    try {
      const address = running.server.node!.server!.address() as { address: string, port: number }
      expect(address.address).toBe('127.0.0.1')
      expect(running.url).toBe(`http://127.0.0.1:${address.port}`)
      expect((await fetch(`${running.url}/livez`)).status).toBe(200)
    }
    finally {
      await running.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
