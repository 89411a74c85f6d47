import * as v from 'valibot'
import { createKey, deleteKeyByPrefix, listKeys } from '../auth/keys.ts'
import type { RunPrepared } from '../db/prepared.ts'
import type { KeyVerifier } from '../auth/verifier.ts'
import type { DcgateHooks } from '../hooks.ts'
import { apiError } from '../http/errors.ts'
import type { RouteTable } from '../http/routes.ts'
import type { ActiveSite, SiteDirectory } from '../sites/directory.ts'
import type { ManagedSites } from '../sites/managed.ts'
import { scriptTag } from '../sites/script-tag.ts'

export interface AdminDeps {
  routes: RouteTable
  prepared: RunPrepared
  sites: SiteDirectory
  managedSites: ManagedSites
  verifier: KeyVerifier
  /** Calls a hook without letting a failing listener break the response. */
  callHook: <K extends keyof DcgateHooks>(name: K, ...args: Parameters<DcgateHooks[K]>) => Promise<unknown>
  scriptHost: string
  /** The server's own base URL, for the release URL. */
  apiBase: string
  status: () => Record<string, unknown>
  migrate: () => Promise<string[]>
}

const SiteParams = v.object({ id: v.pipe(v.string(), v.minLength(1)) })
const KeyParams = v.object({
  id: v.pipe(v.string(), v.minLength(1)),
  prefix: v.pipe(v.string(), v.regex(/^dcp_[\w-]{4,8}$/, 'must be the key\'s first 8 to 12 characters, starting with dcp_')),
})
const CreateKeyBody = v.object({ name: v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(200)) })
const tags = ['Admin']

/** The admin API the `dcgate` CLI talks to (the server is the only writer of the embedded database). */
export function installAdminRoutes(deps: AdminDeps): void {
  const { routes, prepared, sites } = deps
  const site = (id: string): ActiveSite => {
    const found = sites.byId(id)
    if (!found) throw apiError(404, { message: `Unknown site "${id}"; configured sites: ${sites.list().map((s) => s.id).join(', ') || '(none)'}` })
    return found
  }
  const summary = (s: ActiveSite) => ({ id: s.id, name: s.name, status: s.status, plan: s.plan, domains: s.config.domains, cop_key: s.copKey })

  routes.add({
    method: 'GET', path: '/admin/api/status', auth: 'admin', tags, summary: 'Server status',
    handler: () => deps.status(),
  })
  routes.add({
    method: 'POST', path: '/admin/api/migrate', auth: 'admin', tags, summary: 'Apply pending migrations',
    handler: async () => ({ applied: await deps.migrate() }),
  })
  routes.add({
    method: 'GET', path: '/admin/api/sites', auth: 'admin', tags, summary: 'List configured sites',
    handler: () => ({ sites: sites.list().map(summary) }),
  })
  routes.add({
    method: 'GET', path: '/admin/api/sites/:id', auth: 'admin', tags, summary: 'Show a site: cop_key, release secret and script tag',
    params: SiteParams,
    handler: (_event, { params }) => {
      const s = site(params.id)
      return {
        ...summary(s), release_secret: s.releaseSecret, script_tag: scriptTag(deps.scriptHost, s.copKey),
        release_url: `${deps.apiBase}/api/v1/crm-release/${s.copKey}/${s.releaseSecret}`,
      }
    },
  })
  routes.add({
    method: 'GET', path: '/admin/api/sites/:id/config', auth: 'admin', tags,
    summary: 'A dashboard-made site as config (`dcgate sites export`), its keys pinned so it can move to the config file',
    params: SiteParams,
    handler: async (_event, { params }) => {
      const s = site(params.id)
      const input = await deps.managedSites.read(s.id)
      if (!input) throw apiError(409, { message: `Site "${s.id}" is managed in the config file; it is there already` })
      return { site: { ...input, copKey: s.copKey, releaseSecret: s.releaseSecret } }
    },
  })
  routes.add({
    method: 'GET', path: '/admin/api/sites/:id/keys', auth: 'admin', tags, summary: 'List a site\'s private keys (prefixes only)',
    params: SiteParams,
    handler: async (_event, { params }) => ({ keys: await listKeys(prepared, site(params.id).id) }),
  })
  routes.add({
    method: 'POST', path: '/admin/api/sites/:id/keys', auth: 'admin', tags, summary: 'Create a private key (shown in full once)',
    params: SiteParams, body: CreateKeyBody,
    handler: async (event, { params, body }) => {
      const { key, summary: created } = await createKey(prepared, site(params.id).id, body.name)
      event.res.status = 201
      return { key, ...created }
    },
  })
  routes.add({
    method: 'DELETE', path: '/admin/api/sites/:id/keys/:prefix', auth: 'admin', tags, summary: 'Delete a private key; it stops working at once',
    params: KeyParams,
    handler: async (_event, { params }) => {
      const s = site(params.id)
      const result = await deleteKeyByPrefix(prepared, s.id, params.prefix)
      if ('error' in result) {
        if (result.error === 'ambiguous') throw apiError(409, { message: `${result.matches} keys of site "${s.id}" start with ${params.prefix}; give more characters` })
        throw apiError(404, { message: `No key of site "${s.id}" starts with ${params.prefix}` })
      }
      const { hash, ...deleted } = result.deleted
      await deps.verifier.revoke(hash)
      await deps.callHook('keys:deleted', { siteId: s.id, prefix: deleted.prefix })
      return { deleted }
    },
  })
}
