import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CORE_INDEX_URL, killAllChildren, sleep, startServerProcess, type ServerProcess } from '../helpers/server-process.ts'

// A .ts config (the child runs under tsx) with an inline plugin whose route takes 1.5 s. The
// package.json beside it makes the .ts an ES module: without one, bin.mjs fails to load a .ts config
// outside the repo (see config-files.test.ts), which is not what this file tests.
const CONFIG = `import { defineConfig, definePlugin } from '${CORE_INDEX_URL}'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const slow = definePlugin({
  name: 'slow',
  setup(ctx) {
    ctx.app.get('/slow', async () => {
      ctx.logger.info('slow request started')
      await sleep(1500)
      return { done: true }
    })
  },
})

export default defineConfig({
  plugins: ['export', slow],
  sites: [{ id: 'demo', name: 'Demo' }],
})
`

/** Opens a new TCP connection; resolves 'connected' or the error code (ECONNREFUSED). */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      resolve('connected')
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
  })
}

let server: ServerProcess
beforeAll(async () => {
  server = await startServerProcess({ config: CONFIG, fileName: 'dcgate.config.ts', files: { 'package.json': '{ "type": "module" }\n' } })
})
afterAll(async () => {
  await server?.close()
  killAllChildren()
})

describe('dcgate start: shutdown on SIGTERM', () => {
  let copKey: string

  it('finishes the in-flight request, refuses new connections, logs the shutdown and exits 0', async () => {
    const shown = await server.cli(['sites', 'show', 'demo', '--json'])
    expect(shown.code, shown.stderr).toBe(0)
    copKey = (JSON.parse(shown.stdout) as { cop_key: string }).cop_key
    expect(copKey).toMatch(/^cop_/)

    const slow = fetch(`${server.url}/slow`).then(async (response) => ({ status: response.status, body: await response.json() as unknown }))
    await server.waitForOutput(/slow request started/)
    await sleep(200)
    const exitCode = server.stop('SIGTERM')

    await server.waitForOutput(/SIGTERM received/)
    await sleep(100)
    // Still serving the slow request (1.5 s), yet no longer accepting connections.
    expect(await tryConnect(server.port)).toBe('ECONNREFUSED')

    expect(await slow).toEqual({ status: 200, body: { done: true } })
    expect(await exitCode).toBe(0)
    expect(server.stdout + server.stderr).toContain('SIGTERM received: finishing in-flight requests, then closing')
  })

  it('boots again on the same data dir, with the same cop_key', async () => {
    await server.restart()
    const shown = await server.cli(['sites', 'show', 'demo', '--json'])
    expect(shown.code, shown.stderr).toBe(0)
    expect((JSON.parse(shown.stdout) as { cop_key: string }).cop_key).toBe(copKey)
    expect(await server.stop('SIGTERM')).toBe(0)
  })
})
