/**
 * A dcgate server on a socket with the Segment-compatible intake, a site delivering to all eight platform fakes,
 * and a proxy in front that can drop an answer after dcgate has given it (the client sees a network error and
 * retries the same batch).
 */
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from 'h3'
import type { Server } from 'srvx'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startAllPlatforms, type AllPlatforms } from '../fakes/all-platforms.ts'

export interface SeenRequest { path: string, headers: IncomingMessage['headers'], body: Buffer, dropped: boolean }

export interface SegmentWorld {
  app: TestApp
  platforms: AllPlatforms
  key: string
  /** dcgate itself, and the proxy in front of it. */
  serverUrl: string
  proxyUrl: string
  /** What reached the proxy, in order. */
  seen: SeenRequest[]
  /** The answers to the next `count` requests are dropped once dcgate has given them. */
  dropAnswers: (count: number) => void
  sql: <T extends object[]>(text: string, params?: unknown[]) => Promise<T>
  close: () => Promise<void>
}

/** The site's event list maps Segment's "Order Completed" (key order_completed) to Purchase. */
export const SHOP_EVENTS = [{ key: 'order_completed', name: 'Order Completed', sendsAs: 'Purchase' as const }]

export async function startSegmentWorld(): Promise<SegmentWorld> {
  const platforms = await startAllPlatforms()
  const app = await bootTestApp({
    plugins: ['intake', 'segment'],
    delivery: { workerIntervalMs: 25 },
    sites: [
      { id: 'shop', name: 'Shop', events: SHOP_EVENTS, destinations: platforms.destinations },
      { id: 'paused', name: 'Paused', status: 'paused' },
    ],
  })
  const key = await app.createKey('shop')
  const server: Server = serve(app.dcgate.app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
  await server.ready()
  const serverUrl = server.url!.replace(/\/$/, '')
  const seen: SeenRequest[] = []
  let toDrop = 0
  const proxy: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const dropped = toDrop > 0
      if (dropped) toDrop--
      seen.push({ path: req.url ?? '', headers: req.headers, body, dropped })
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length', 'transfer-encoding'].includes(name)).map(([name, value]) => [name, String(value)]))
      void fetch(`${serverUrl}${req.url}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : new Uint8Array(body), signal: AbortSignal.timeout(15_000) }).then(async (answer) => {
        const text = await answer.text()
        // dcgate has answered (and stored what it took); the client never hears it.
        if (dropped) return void req.socket.destroy()
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text)
      }, () => void req.socket.destroy())
    })
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
  return {
    app, platforms, key, serverUrl, proxyUrl, seen,
    dropAnswers: (count) => void (toDrop = count),
    sql: (text, params = []) => app.dcgate.database.orm.em.getConnection().execute(text, params),
    async close() {
      proxy.closeAllConnections()
      await new Promise((resolve) => proxy.close(resolve))
      await server.close(true)
      await app.close()
      await platforms.close()
    },
  }
}

export function basicAuth(key: string): string {
  return `Basic ${Buffer.from(`${key}:`).toString('base64')}`
}
