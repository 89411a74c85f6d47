import type { ResolvedConfig } from '../../core/config/schema.ts'

/**
 * The server's public URL without a trailing slash (server.baseUrl, else http://localhost:<port>), as the admin API
 * and the banner build it; `status` prefers server.statusBaseUrl, where the deletion proof pages are served.
 * Never the request's Host header, which the client chooses.
 */
export function publicBaseUrl(config: Readonly<ResolvedConfig>, which: 'api' | 'status' = 'api'): string {
  const { server } = config
  const base = (which === 'status' ? server.statusBaseUrl : undefined) ?? server.baseUrl ?? `http://localhost:${server.port}`
  return base.replace(/\/+$/, '')
}
