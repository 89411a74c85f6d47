import type { ResolvedConfig } from '../config/schema.ts'
import { adminTokenFile, readAdminToken } from '../admin/token.ts'
import { CliError } from './output.ts'

export interface AdminClient {
  url: string
  request: <T>(method: string, path: string, body?: unknown) => Promise<T>
}

/** Talks to the running server's admin API: --url, DCGATE_URL, or loopback on the configured port. */
export function createAdminClient(config: ResolvedConfig, urlOverride?: string): AdminClient {
  const url = (urlOverride ?? process.env.DCGATE_URL ?? `http://127.0.0.1:${config.server.port}`).replace(/\/+$/, '')
  return {
    url,
    async request<T>(method: string, path: string, body?: unknown): Promise<T> {
      const token = readAdminToken(config.admin.token, config.dataDir)
      if (!token) {
        throw new CliError(`No admin token: set DCGATE_ADMIN_TOKEN, or start the server once so it writes ${adminTokenFile(config.dataDir)}`)
      }
      let response: Response
      try {
        response = await fetch(`${url}/admin/api${path}`, {
          method,
          headers: { 'authorization': `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        })
      }
      catch {
        throw new CliError(`Cannot reach the dcgate server at ${url}. Is it running? Start it with \`npm start\`, or pass --url.`)
      }
      const text = await response.text()
      const data = text ? safeJson(text) : undefined
      if (!response.ok) {
        const message = (data as { message?: string } | undefined)?.message ?? `HTTP ${response.status}`
        const source = config.admin.token ? 'DCGATE_ADMIN_TOKEN / admin.token' : adminTokenFile(config.dataDir)
        throw new CliError(response.status === 401 ? `${message}: the server at ${url} does not accept the token from ${source}` : message)
      }
      return data as T
    },
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  }
  catch {
    return { message: text.slice(0, 200) }
  }
}
