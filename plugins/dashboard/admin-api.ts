import type { H3 } from 'h3'
import type { KeySummary } from '../../core/auth/keys.ts'

export interface SiteDetail { id: string, name: string, cop_key: string, release_secret: string, release_url: string, script_tag: string }

export interface AdminApi {
  /** Any admin API route (`/admin/api/...`), e.g. the delivery report's retry: its status and parsed JSON answer. */
  request: <T = unknown>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => Promise<{ status: number, data: T }>
  site: (siteId: string) => Promise<SiteDetail>
  listKeys: (siteId: string) => Promise<KeySummary[]>
  createKey: (siteId: string, name: string) => Promise<KeySummary & { key: string }>
  /** Deletes the key with this prefix; false when the site has no such key. */
  deleteKey: (siteId: string, prefix: string) => Promise<boolean>
}

/**
 * The admin API (core/admin/routes.ts), called in-process with the admin token: the dashboard acts through the
 * same services as the CLI, so a deleted key is revoked in every instance's cache and `keys:deleted` is called.
 * An in-process request has no socket, which the admin guard counts as loopback.
 */
export function createAdminApi(app: H3, token: string): AdminApi {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number, data: T }> => {
    const response = await app.request(`http://dcgate.internal${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    return { status: response.status, data: await response.json() as T }
  }
  const ok = <T>(answer: { status: number, data: T }): T => {
    if (answer.status >= 300) throw new Error(`admin API answered ${answer.status}`)
    return answer.data
  }
  const sitePath = (siteId: string) => `/admin/api/sites/${encodeURIComponent(siteId)}`
  return {
    request: call,
    site: async (siteId) => ok(await call<SiteDetail>('GET', sitePath(siteId))),
    listKeys: async (siteId) => ok(await call<{ keys: KeySummary[] }>('GET', `${sitePath(siteId)}/keys`)).keys,
    createKey: async (siteId, name) => ok(await call<KeySummary & { key: string }>('POST', `${sitePath(siteId)}/keys`, { name })),
    async deleteKey(siteId, prefix) {
      const answer = await call('DELETE', `${sitePath(siteId)}/keys/${encodeURIComponent(prefix)}`)
      if (answer.status === 404) return false
      ok(answer)
      return true
    },
  }
}
