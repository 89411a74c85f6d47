import { serve } from 'h3'
import type { Server } from 'srvx'
import type { ConsolaInstance } from 'consola'
import { createApp, type CreateAppOptions, type DcgateApp } from './app.ts'
import type { ResolvedConfig } from './config/schema.ts'
import { printBanner } from './banner.ts'
import { createLogger } from './logger.ts'
import { governMemoryMode, startedWithMemorySaver } from './memory-mode.ts'
import { metrics } from './metrics/registry.ts'

export interface RunningServer {
  dcgate: DcgateApp
  server: Server
  url: string
  /** Stops accepting connections, lets in-flight requests finish, then closes plugins and the database. */
  stop: () => Promise<void>
}

export async function startServer(config: ResolvedConfig, options: CreateAppOptions & { banner?: boolean }): Promise<RunningServer> {
  const logger = options.logger ?? createLogger()
  const dcgate = await createApp(config, { ...options, logger })
  const server = serve(dcgate.app, {
    port: config.server.port,
    hostname: config.server.host,
    silent: true,
    gracefulShutdown: false,
    // No srvx trustProxy: core/http/client-ip.ts resolves the client address (hop counts, CIDRs), and the Host
    // header stays what the proxy passed on (Caddy keeps it; nginx needs proxy_set_header Host $host).
  })
  try {
    await server.ready()
  }
  catch (error) {
    await dcgate.close()
    throw error
  }
  const url = listeningUrl(server, config)
  if (options.banner !== false) printBanner(logger, dcgate, url)
  collectBootGarbage()
  const memoryMode = followLoad(logger)
  let stopping: Promise<void> | undefined
  const stop = () => (stopping ??= (async () => {
    memoryMode.stop()
    dcgate.drain() // /readyz says 503 on connections still open while in-flight requests finish
    await closeGracefully(server)
    await dcgate.close()
  })())
  return { dcgate, server, url, stop }
}

/**
 * One full collection once boot is over. Boot leaves tens of MB of garbage (migrations, parsed datasets) in the old
 * generation, and an idle server allocates too little for V8 to collect it, so it stays resident. `gc` exists when
 * Node runs with --expose-gc, as `dcgate start` does (core/cli/server-flags.ts); elsewhere (tests) this does nothing.
 */
function collectBootGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.()
}

/** V8's memory saver off while the process is busy, back on once it has been idle (core/memory-mode.ts). */
function followLoad(logger: ConsolaInstance) {
  const active = startedWithMemorySaver()
  if (active) metrics.memorySaver.set(1)
  return governMemoryMode({
    onChange(mode) {
      metrics.memorySaver.set(mode === 'saver' ? 1 : 0)
      logger.debug(mode === 'saver' ? 'idle: V8 memory saver mode on' : 'busy: V8 memory saver mode off until idle')
    },
  }, active)
}

/** Stops cleanly on SIGINT/SIGTERM; a second signal forces the exit. */
export function handleSignals(running: RunningServer, logger: ConsolaInstance): void {
  let signalled = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) process.exit(1)
    signalled = true
    logger.info(`${signal} received: finishing in-flight requests, then closing`)
    running.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('shutdown failed', error)
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
}

/**
 * In-flight requests get this long to finish after a stop signal; then their connections are cut. Closing the rest
 * takes well under a second, so the process is gone before the 10 s Docker and podman wait before SIGKILL.
 */
const SHUTDOWN_GRACE_MS = 8_000

/**
 * Stops accepting, lets in-flight requests finish, and does not let keep-alive clients hold the
 * process open: responses from now on close their connection, and idle ones are closed as they appear.
 */
async function closeGracefully(server: Server): Promise<void> {
  const node = server.node?.server as import('node:http').Server | undefined
  node?.prependListener('request', (_request, response) => {
    response.shouldKeepAlive = false
  })
  const closing = server.close()
  const sweep = setInterval(() => node?.closeIdleConnections(), 50)
  const deadline = setTimeout(() => void server.close(true), SHUTDOWN_GRACE_MS)
  try {
    await closing
  }
  finally {
    clearInterval(sweep)
    clearTimeout(deadline)
  }
}

function listeningUrl(server: Server, config: ResolvedConfig): string {
  const address = server.node?.server?.address()
  const port = typeof address === 'object' && address ? address.port : config.server.port
  const host = !config.server.host || config.server.host === '0.0.0.0' || config.server.host === '::' ? 'localhost' : config.server.host
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`
}
