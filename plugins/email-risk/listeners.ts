import { normalizeEmail } from '../../core/identity/normalize.ts'
import type { PluginContext } from '../../core/plugin.ts'
// Types only: the hook's payload (and its declaration), so nothing of the capture plugin is loaded from here.
import type { IdentifyPayload } from '../../core/hooks.ts'
import type { EmailAssessor } from './assess.ts'
import type { EmailCheck } from './check.ts'
import { deleteResult } from './queries.ts'
import type { DeviceFingerprint } from './result.ts'

/** What a future capture may pass along with an identification; read when present. */
type WithDevice = IdentifyPayload & { device?: DeviceFingerprint }

/**
 * capture:identify: the identified user is stored with its risk (score, label, disposable), scored offline: the
 * tracking script's key is public, so an identification never makes the server ask RDAP or DNS about a domain
 * someone chose. The assessment is kept (tagged scored_offline when the domain's answers were not cached) and the
 * first private email check completes it. dsar:erase: the stored assessment, the answer kept in memory and the
 * site-wide shape entry of the address go with the person; cached domain answers stay (they are about a domain).
 */
export function addListeners(ctx: PluginContext, deps: { assessor: EmailAssessor, checks: EmailCheck }): void {
  ctx.hooks.hook('capture:identify', async (payload: WithDevice) => {
    const info = await deps.assessor.offline(payload.siteId, payload.email)
    payload.risk = { score: info.risk_score, label: info.risk_label, isDisposable: info.fraud_signals.disposable_domain }
    // A failure here is reported by capture's callHookSafe; the risk above is already set and stored with the user.
    await deps.checks.saveResult(payload.siteId, payload.emailHash, info, payload.device)
  })

  ctx.hooks.hook('dsar:erase', async ({ siteId, email, emailHash }) => {
    deps.checks.forget(siteId, emailHash)
    const normalized = normalizeEmail(email)
    await Promise.all([
      deleteResult(ctx.prepared, siteId, emailHash),
      normalized ? deps.assessor.forget(siteId, normalized) : undefined,
    ])
    // A check answered while the row was being deleted may have kept it again: dropped once more.
    deps.checks.forget(siteId, emailHash)
  })
}
