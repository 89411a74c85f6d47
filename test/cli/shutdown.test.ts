import { Agent, get } from 'node:http'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { onPostgres } from '../helpers/database.ts'
import {
  CORE_INDEX_URL, STACK_LINE, freePort, killAllChildren, runDcgate, sleep, startServerProcess, type ServerProcess,
} from '../helpers/server-process.ts'

// Each test spawns processes of 1-4 s (more on a loaded machine).
vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 })

// A .ts config (Node strips its types) with an inline plugin whose route takes 1.5 s.
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

/** GET through `agent` (keep-alive, like a proxy or fetch), resolving status and JSON body. */
function getJson(agent: Agent, url: string): Promise<{ status: number, body: unknown }> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (response) => {
      let text = ''
      response.setEncoding('utf8').on('data', (chunk: string) => { text += chunk })
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) as unknown }))
    }).on('error', reject)
  })
}

let server: ServerProcess
beforeAll(async () => {
  server = await startServerProcess({ config: CONFIG, fileName: 'dcgate.config.ts' })
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

    let slowSettled = false
    const slow = fetch(`${server.url}/slow`)
      .then(async (response) => ({ status: response.status, body: await response.json() as unknown }))
      .finally(() => { slowSettled = true })
    await server.waitForOutput(/slow request started/)
    await sleep(200)
    const exitCode = server.stop('SIGTERM')

    await server.waitForOutput(/SIGTERM received/)
    await sleep(100)
    // Still serving the slow request (1.5 s), yet no longer accepting connections.
    expect(await tryConnect(server.port)).toBe('ECONNREFUSED')
    expect(slowSettled, 'the slow request was still in flight').toBe(false)

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

  // A client that keeps using its connection (a reverse proxy's upstream pool, a load balancer) must not
  // postpone the exit: responses after the signal close their connection.
  describe('with a keep-alive client', () => {
    beforeAll(() => server.restart())

    it('does not keep serving a kept-alive connection after SIGTERM: exits within 5 s of the in-flight request', async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 })
      try {
        const slow = getJson(agent, `${server.url}/slow`)
        await server.waitForOutput(/slow request started/)
        await sleep(200)
        let exited = false
        const exitCode = server.stop('SIGTERM')
        void exitCode.then(() => { exited = true })
        expect(await slow).toEqual({ status: 200, body: { done: true } })

        // The client keeps using its connection, as the keep-alive response invites it to.
        const deadline = Date.now() + 5000
        while (!exited && Date.now() < deadline) {
          await getJson(agent, `${server.url}/openapi.json`).catch(() => {})
          await sleep(250)
        }
        expect(exited, 'dcgate exited while the client kept its connection busy').toBe(true)
        expect(await exitCode).toBe(0)
      }
      finally {
        agent.destroy()
      }
    })
  })

  // PGlite has no lock of its own; dcgate keeps <dataDir>/db.lock. PostgreSQL runs keep no database there.
  describe.skipIf(onPostgres)('the embedded data dir', () => {
    beforeAll(async () => {
      await server.stop()
      await server.restart()
    })

    it('refuses a second server on the same data dir while the first runs', async () => {
      const second = await runDcgate(['start', '--config', server.configFile], { ...server.env, PORT: String(await freePort()) })
      expect(second.code).not.toBe(0)
      expect(second.code).not.toBeNull()
      expect(second.stderr).toMatch(/^dcgate: The embedded database .* is in use by another dcgate process \(pid \d+\)/)
      expect(second.stdout + second.stderr).not.toMatch(STACK_LINE)
      expect((await fetch(`${server.url}/openapi.json`)).status).toBe(200)
    })

    it('boots again after the server was killed (SIGKILL), with the same cop_key', async () => {
      expect(await server.stop('SIGKILL')).toBeNull()
      await server.restart()
      const shown = await server.cli(['sites', 'show', 'demo', '--json'])
      expect(shown.code, shown.stderr).toBe(0)
      expect((JSON.parse(shown.stdout) as { cop_key: string }).cop_key).toBe(copKey)
    })
  })
})
