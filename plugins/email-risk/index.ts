import { definePlugin, type PluginDefinition } from '../../core/plugin.ts'
import { createEmailAssessor } from './assess.ts'
import { createEmailCheck } from './check.ts'
import { EmailCheckMonth, EmailCheckQuota, EmailRiskResult } from './entities.ts'
import { addListeners } from './listeners.ts'
import { EmailRiskOptionsSchema, resolveEmailRiskOptions, type EmailRiskOptions, type EmailRiskOptionsInput } from './options.ts'
import { scheduleQuota } from './quota.ts'
import { addUsageAdminRoute } from './usage-route.ts'
import { addEmailCheckRoute } from './route.ts'

/**
 * The email risk check: POST /api/v1/services/email/check (stored answer or live check, quota), the risk of every
 * identified user (capture:identify), the usage admin route (`dcgate usage`). Options: the config's `emailRisk`.
 */
export default createEmailRiskPlugin()

/**
 * The plugin with its options given here rather than read from the config's `emailRisk` (tests, or an inline
 * plugin in a config file): `plugins: [createEmailRiskPlugin({ rdapUrl, dnsServers })]`.
 */
export function createEmailRiskPlugin(inline?: EmailRiskOptionsInput): PluginDefinition<EmailRiskOptions> {
  return definePlugin({
    name: 'email-risk',
    entities: [EmailRiskResult, EmailCheckQuota, EmailCheckMonth],
    options: EmailRiskOptionsSchema,
    setup(ctx, configured) {
      const options = inline ? resolveEmailRiskOptions(inline) : configured
      const assessor = createEmailAssessor(ctx.storage, options)
      const checks = createEmailCheck(ctx, assessor, options)
      const quota = scheduleQuota(ctx)
      addEmailCheckRoute(ctx, { checks, quota })
      addUsageAdminRoute(ctx, quota)
      addListeners(ctx, { assessor, checks })
      ctx.hooks.hook('app:close', async () => {
        assessor.close()
        await quota.flush()
      })
    },
  })
}
