import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'

export interface RecordedRequest {
  method: string
  path: string
  headers: IncomingMessage['headers']
  body: string
}

export interface FakeReply {
  status: number
  body: unknown
  headers?: Record<string, string>
}

export interface FakeServer {
  /** e.g. http://127.0.0.1:41234, to pass as an adapter's baseUrl */
  url: string
  /** Every request received, in order. */
  requests: RecordedRequest[]
  /** Answer the next N requests with these replies instead of the handler (to inject 500, 429, 401...). */
  queue: (...replies: FakeReply[]) => void
  close: () => Promise<void>
}

/**
 * A loopback HTTP server standing in for a platform we cannot reach. `handle` checks what the real API
 * checks and answers with the real API's bodies; queued replies override it for failure scenarios.
 */
export async function startFakeServer(handle: (request: RecordedRequest) => FakeReply | Promise<FakeReply>): Promise<FakeServer> {
  const requests: RecordedRequest[] = []
  const queued: FakeReply[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      const request = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
      requests.push(request)
      const reply = queued.shift() ?? await handle(request)
      const body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
      res.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    queue: (...replies) => void queued.push(...replies),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
