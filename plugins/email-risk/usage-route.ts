import * as v from 'valibot'
import { apiError } from '../../core/http/errors.ts'
import type { PluginContext } from '../../core/plugin.ts'
import { readUsage } from './queries.ts'
import { FREE_CHECKS, type Quota } from './quota.ts'


/** GET /admin/api/sites/:id/email-checks/usage, for `dcgate usage --site <id>`: lifetime, free left, billable, per month. */
export function addUsageAdminRoute(ctx: PluginContext, quota: Quota): void {
  ctx.routes.add({
    method: 'GET', path: '/admin/api/sites/:id/email-checks/usage', auth: 'admin', tags: ['Admin'],
    summary: 'Email checks of a site: lifetime, free left, billable, per month',
    params: v.object({ id: v.string() }),
    handler: async (_event, { params }) => {
      const site = ctx.sites.byId(params.id)
      if (!site) throw apiError(404, { message: `Unknown site "${params.id}"` })
      await quota.flush() // this instance's counts not written yet (other instances write theirs within 25 ms)
      const { total, months } = await readUsage(ctx.prepared, site.id)
      const checks = Number(total?.checks ?? 0)
      return {
        site: site.id,
        plan: site.plan,
        checks,
        free_checks: FREE_CHECKS,
        free_left: Math.max(0, FREE_CHECKS - checks),
        billable: Number(total?.billable ?? 0),
        blocked: site.plan === 'free' && checks >= FREE_CHECKS,
        first_check_at: total?.first_check_at && checks > 0 ? new Date(total.first_check_at).toISOString() : null,
        last_check_at: total?.last_check_at && checks > 0 ? new Date(total.last_check_at).toISOString() : null,
        months: months.map((m) => ({ month: m.month, checks: Number(m.checks), billable: Number(m.billable) })),
      }
    },
  })
}
