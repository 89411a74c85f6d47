import { request } from 'node:http'
import { serve } from 'h3'
import type { Server } from 'srvx'
import { afterAll, describe, expect, it } from 'vitest'
import type { ConfigInput } from '../../core/config/schema.ts'
import { resolveConfig } from '../../core/config/load.ts'
import { BootError } from '../../core/errors.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

// A reverse proxy on this host connects from a loopback address and need not add a forwarding header. Its requests
// must not count as local: /metrics wants the admin token from it, and the loopback-only admin API refuses it. The
// proxy here connects from 127.0.0.2, the address the config names; a direct connection from 127.0.0.1 stays local.
const PROXY = '127.0.0.2'
const running: { app: TestApp, server: Server }[] = []
afterAll(async () => {
  for (const { app, server } of running) {
    await server.close(true)
    await app.close()
  }
})

async function start(config: Partial<ConfigInput>): Promise<(path: string, from: string, headers?: Record<string, string>) => Promise<number>> {
  const app = await bootTestApp(config)
  const server = serve(app.dcgate.app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
  await server.ready()
  running.push({ app, server })
  const port = (server.node!.server!.address() as { port: number }).port
  const token = app.dcgate.adminToken
  return (path, from, headers = {}) => new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, path, localAddress: from, headers: { ...headers, ...(headers.authorization === 'token' ? { authorization: `Bearer ${token}` } : {}) } }, (answer) => {
      answer.resume()
      answer.on('end', () => resolve(answer.statusCode!))
    })
    sent.on('error', reject)
    sent.end()
  })
}

describe('loopback only on a direct connection', () => {
  it('a request from an admin.trustedProxies address without forwarding headers needs the token on /metrics', async () => {
    const get = await start({ admin: { trustedProxies: [PROXY] } })
    expect(await get('/metrics', PROXY)).toBe(401)
    expect(await get('/metrics', PROXY, { authorization: 'token' })).toBe(200)
    expect(await get('/metrics', '127.0.0.1')).toBe(200)
    expect(await get('/admin/api/sites', PROXY, { authorization: 'token' })).toBe(403)
    expect(await get('/admin/api/sites', '127.0.0.1', { authorization: 'token' })).toBe(200)
  })

  it('takes the proxy addresses server.trustProxy lists when admin.trustedProxies is unset', async () => {
    const get = await start({ server: { trustProxy: [PROXY] } })
    expect(await get('/metrics', PROXY)).toBe(401)
    expect(await get('/metrics', '127.0.0.1')).toBe(200)
  })

  it('refuses an entry that is no address, CIDR or range name, naming it', () => {
    let details: string[] = []
    try {
      resolveConfig({ admin: { trustedProxies: ['127.0.0.2', 'proxy.local'] } }, {})
    }
    catch (error) {
      if (error instanceof BootError) details = error.details
    }
    expect(details).toEqual(["admin.trustedProxies[1]: must be an IP address, a CIDR such as 10.0.0.0/8, or one of 'loopback', 'private'"])
  })
})
