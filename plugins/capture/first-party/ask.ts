import * as v from 'valibot'
import { apiError } from '../../../core/http/errors.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import { addVerifyDomainRoute } from './admin-route.ts'
import type { FirstPartyChecker } from './state.ts'
import { normaliseHost } from './verify.ts'

const AskQuery = v.object({ domain: v.pipe(v.string(), v.minLength(1, 'must name a host')) })

/**
 * Whether a TLS certificate may be issued for `domain`: the script host itself, or a configured
 * firstPartyHost that is verified (read from the shared storage, so a check on another instance counts).
 */
export async function allowsCertificate(checker: FirstPartyChecker, domain: string): Promise<boolean> {
  const host = normaliseHost(domain)
  return host === checker.scriptHost || await checker.isVerifiedShared(host)
}

/**
 * The first-party routes: `GET /tls/ask?domain=` for Caddy's on-demand TLS (`on_demand_tls { ask … }`:
 * any 2xx allows the certificate) and the admin check behind `dcgate sites verify-domain`.
 */
export function addFirstPartyRoutes(ctx: Pick<PluginContext, 'routes' | 'sites'>, checker: FirstPartyChecker): void {
  ctx.routes.add({
    method: 'GET', path: '/tls/ask', auth: 'none', tags: ['First-party'],
    summary: 'May a TLS certificate be issued for this host? (Caddy on-demand TLS ask)',
    description: '200 when `domain` is the script host or a verified first-party host, else 404. Caddy asks it before issuing a certificate on demand.',
    query: AskQuery,
    responses: { 200: { description: 'A certificate may be issued' }, 404: { description: 'Not a verified first-party host' } },
    handler: async (_event, { query }) => {
      if (!(await allowsCertificate(checker, query.domain))) throw apiError(404, { message: `${normaliseHost(query.domain)} is not a verified first-party host` })
      return { domain: normaliseHost(query.domain), allowed: true }
    },
  })
  addVerifyDomainRoute(ctx.routes, ctx.sites, checker)
}
