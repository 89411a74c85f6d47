import * as v from 'valibot'
import { MailboxSchema } from '../../core/identity/email.ts'
import type { PluginContext } from '../../core/plugin.ts'
import { metrics } from '../../core/metrics/registry.ts'
import type { EmailCheck } from './check.ts'
import type { Quota } from './quota.ts'
import { EmailCheckAnswerSchema } from './result.ts'

export const EmailCheckBody = v.object({
  email: MailboxSchema,
})

/**
 * POST /api/v1/services/email/check: validate → authenticate (x-dc-key, by the route table) → count toward the
 * quota (429 on a free site past 500) → answer from storage or check live → respond.
 */
export function addEmailCheckRoute(ctx: PluginContext, deps: { checks: EmailCheck, quota: Quota }): void {
  ctx.routes.add({
    method: 'POST',
    path: '/api/v1/services/email/check',
    auth: 'key',
    summary: 'Is this email risky? A verdict, a 0–100 score, reasons and signals',
    description: 'Answered from stored data when the email was identified on the site (device link, IP details, no new lookup); '
      + 'otherwise checked live and saved as a server-side identification. Each check counts toward the quota: 500 free per site, '
      + 'then 429 on plan free.',
    tags: ['Email check'],
    body: EmailCheckBody,
    responses: {
      200: EmailCheckAnswerSchema,
      400: { description: 'Email missing or not an email address' },
      429: { description: 'Free plan quota of 500 checks exhausted' },
    },
    handler: async (event, { body }) => {
      const site = event.context.site!
      await deps.quota.count(site)
      const data = await deps.checks.check(site.id, body.email)
      metrics.emailChecks.inc({ risk: data.emailInfo.risk_label })
      return { success: true, data }
    },
  })
}
