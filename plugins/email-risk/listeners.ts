import type { PluginContext } from '../../core/plugin.ts'
// Types only: the hook's payload (and its declaration), so nothing of the capture plugin is loaded from here.
import type { IdentifyPayload } from '../capture/routes/identify.ts'
import type { EmailAssessor } from './assess.ts'
import type { EmailCheck } from './check.ts'
import type { DeviceFingerprint } from './result.ts'

/** What a future capture may pass along with an identification; read when present. */
type WithDevice = IdentifyPayload & { device?: DeviceFingerprint }

/**
 * capture:identify: the identified user is stored with its risk (score, label, disposable), and the assessment is
 * kept so a later email check answers from it. dsar:erase: the person's stored assessment goes with them.
 */
export function addListeners(ctx: PluginContext, deps: { assessor: EmailAssessor, checks: EmailCheck }): void {
  ctx.hooks.hook('capture:identify', async (payload: WithDevice) => {
    const info = await deps.assessor.live(payload.siteId, payload.email)
    payload.risk = { score: info.risk_score, label: info.risk_label, isDisposable: info.fraud_signals.disposable_domain }
    // A failure here is reported by capture's callHookSafe; the risk above is already set and stored with the user.
    await deps.checks.saveResult(payload.siteId, payload.emailHash, info, payload.device)
  })

  ctx.hooks.hook('dsar:erase', async ({ siteId, emailHash }) => {
    deps.checks.forget(siteId, emailHash)
    await ctx.orm.em.getConnection().execute('delete from email_risk_results where site_id = ? and email_hash = ?', [siteId, emailHash])
  })
}
