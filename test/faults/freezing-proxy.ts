import { connect, createServer, type Server, type Socket } from 'node:net'

export interface FreezingProxy {
  /** The target URL with the proxy's loopback port in place of the target's. */
  url: string
  /**
   * Stops forwarding in both directions without closing anything: sockets stay open, bytes wait in the kernel's
   * buffers, new connections are accepted and connected upstream but carry nothing. A database that hangs.
   */
  freeze: () => void
  /** Forwards again: whatever waited is delivered, closes that happened meanwhile follow. */
  thaw: () => void
  close: () => Promise<void>
}

/** A TCP proxy (node:net) in front of a postgres:// URL, for tests of a database that stops answering. */
export async function startFreezingProxy(target: string): Promise<FreezingProxy> {
  const to = new URL(target)
  const pairs = new Set<[Socket, Socket]>()
  let frozen = false
  const server: Server = createServer((client) => {
    const upstream = connect(Number(to.port || 5432), to.hostname)
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    // Manual forwarding with pause(): a paused socket is not read, so nothing moves and no close is noticed.
    for (const [from, into] of [[client, upstream], [upstream, client]] as const) {
      from.on('data', (chunk) => {
        if (!into.write(chunk)) {
          from.pause()
          into.once('drain', () => void (frozen || from.resume()))
        }
      })
      from.on('end', () => into.end())
      from.on('error', () => into.destroy())
      from.on('close', () => {
        into.destroy()
        pairs.delete(pair)
      })
    }
    if (frozen) for (const socket of pair) socket.pause()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const url = new URL(target)
  url.hostname = '127.0.0.1'
  url.port = String(typeof address === 'object' && address ? address.port : 0)
  return {
    url: url.toString(),
    freeze() {
      frozen = true
      for (const pair of pairs) for (const socket of pair) socket.pause()
    },
    thaw() {
      frozen = false
      for (const pair of pairs) for (const socket of pair) socket.resume()
    },
    async close() {
      for (const pair of pairs) for (const socket of pair) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
