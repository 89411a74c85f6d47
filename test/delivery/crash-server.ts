import { createHmac } from 'node:crypto'
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from '../fakes/server.ts'
import { killAllChildren, startServerProcess, type ServerProcess } from '../helpers/server-process.ts'

/** A dcgate process delivering to a Meta stand-in, with a signed zapier source: what the crash tests kill and restart. */
export interface CrashServer {
  platform: FakeServer
  server: ServerProcess
  /** A signed zapier body: stored and answered at once, then sent by the worker. Returns the HTTP status. */
  postZapier: (body: object) => Promise<number>
  /** The delivery report as [messageId, status, attempts], newest first. */
  listed: () => Promise<[string, string, number][]>
  close: () => Promise<void>
}

const ZAPIER_SECRET = 'crash-zapier-secret-0123456789'

/** `handle` answers like Meta's Graph API (the tests hold some calls open to kill the process mid-delivery). */
export async function startCrashServer(workerIntervalMs: number, handle: (request: RecordedRequest) => Promise<FakeReply>): Promise<CrashServer> {
  const platform = await startFakeServer(handle)
  const server = await startServerProcess({
    config: `export default {
      plugins: ['intake', 'export'],
      // A held request that times out before the kill (a slow machine) is retried within seconds, not half a minute.
      delivery: { leaseSeconds: 2, workerIntervalMs: ${workerIntervalMs}, retryBaseMs: 2000 },
      sites: [{ id: 'demo', name: 'Demo', destinations: { meta: { pixelId: '1234567890', accessToken: 'token', baseUrl: '${platform.url}' } }, sources: { zapier: { secret: '${ZAPIER_SECRET}' } } }],
    }\n`,
  })
  let copKey: Promise<string> | undefined
  return {
    platform,
    server,
    async postZapier(body) {
      // One look-up shared by concurrent posts: each starting its own CLI process would spread them over seconds.
      copKey ??= server.cli(['sites', 'list', '--json']).then(({ stdout }) => (JSON.parse(stdout) as { id: string, cop_key: string }[]).find((s) => s.id === 'demo')!.cop_key)
      const key = await copKey
      const raw = JSON.stringify(body)
      const signature = `sha256=${createHmac('sha256', ZAPIER_SECRET).update(raw).digest('hex')}`
      return (await fetch(`${server.url}/api/v1/conversions/zapier/${key}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-dcgate-signature': signature }, body: raw })).status
    },
    async listed() {
      const { stdout } = await server.cli(['deliveries', 'list', '--site', 'demo', '--json'])
      return (JSON.parse(stdout) as { message_id: string, status: string, attempts: number }[]).map((d): [string, string, number] => [d.message_id, d.status, d.attempts])
    },
    async close() {
      await server.close()
      killAllChildren()
      await platform.close()
    },
  }
}
