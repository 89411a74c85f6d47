import * as v from 'valibot'
import { apiError } from '../../../core/http/errors.ts'
import type { RouteTable } from '../../../core/http/routes.ts'
import type { SiteDirectory } from '../../../core/sites/directory.ts'
import type { VerifyDomainAnswer } from '../../../core/sites/verify-domain.ts'
import type { FirstPartyChecker } from './state.ts'

const SiteParams = v.object({ id: v.pipe(v.string(), v.minLength(1)) })

/** POST /admin/api/sites/:id/verify-domain: checks the site's firstPartyHost now and stores the outcome. */
export function addVerifyDomainRoute(routes: RouteTable, sites: SiteDirectory, checker: FirstPartyChecker): void {
  routes.add({
    method: 'POST', path: '/admin/api/sites/:id/verify-domain', auth: 'admin', tags: ['Admin'],
    summary: 'Check a site\'s first-party host (its CNAME to the script host) now',
    description: 'Resolves the site\'s firstPartyHost, stores the outcome for every instance and answers it; 409 when the site has no firstPartyHost.',
    params: SiteParams,
    handler: async (_event, { params }): Promise<VerifyDomainAnswer> => {
      const site = sites.byId(params.id)
      if (!site) throw apiError(404, { message: `Unknown site "${params.id}"; configured sites: ${sites.list().map((s) => s.id).join(', ') || '(none)'}` })
      const host = site.config.firstPartyHost
      if (!host) throw apiError(409, { message: `Site "${site.id}" has no firstPartyHost; set one in its config (e.g. firstPartyHost: 't.${site.config.domains[0] ?? 'shop.example'}') and restart` })
      const { status, result } = await checker.check(host)
      return {
        site_id: site.id,
        host: status.host,
        verified: status.verified,
        target: result.target ?? null,
        reason: result.verified ? null : result.reason ?? null,
        temporary: result.temporary === true,
        checked_at: status.checkedAt,
        verified_at: status.verifiedAt ?? null,
        script_host: checker.scriptHost,
        record: { name: status.host, type: 'CNAME', value: checker.scriptHost },
      }
    },
  })
}
