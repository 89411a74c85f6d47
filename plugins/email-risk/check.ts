import { LRUCache } from 'lru-cache'
import { sha256Hex } from '../../core/identity/hash.ts'
import type { PluginContext } from '../../core/plugin.ts'
import type { EmailAssessor } from './assess.ts'
import type { DeviceFingerprint, EmailCheckData, EmailInfo } from './result.ts'
import { INCOMPLETE_TAGS } from './score.ts'
import { saveCompletedResult, saveLiveCheck, upsertResult, type RiskColumns } from './queries.ts'
import { findStoredEmail } from './stored.ts'
import { growingBound } from '../../core/growing-lru.ts'

export interface EmailCheck {
  /**
   * `email` normalised. Answers from storage when the email is identified on the site (completing an assessment
   * that was scored offline), else checks it live and saves it.
   */
  check: (siteId: string, email: string) => Promise<EmailCheckData>
  /** Stores an assessment made at identification (capture:identify); drops the cached answer. */
  saveResult: (siteId: string, emailHash: string, info: EmailInfo, device: DeviceFingerprint | undefined) => Promise<void>
  /** Drops the cached stored answer (an identification or an erasure changed it). */
  forget: (siteId: string, emailHash: string) => void
}

/** Stored answers kept in memory at most (about 2 KB each). */
const CACHED_ANSWERS = 20_000

/** Whether an assessment lacks network signals it needed (scored offline, or past the site's lookups per minute). */
export function isIncomplete(info: EmailInfo): boolean {
  return info.tags.some((tag) => INCOMPLETE_TAGS.includes(tag))
}

const riskOf = (info: EmailInfo): RiskColumns => ({ score: info.risk_score, label: info.risk_label, isDisposable: info.fraud_signals.disposable_domain })

export function createEmailCheck(ctx: PluginContext, assessor: EmailAssessor, options: { answerCacheSeconds: number }): EmailCheck {
  const answers = options.answerCacheSeconds > 0 ? new LRUCache<string, EmailCheckData>({ ...growingBound(CACHED_ANSWERS), ttl: options.answerCacheSeconds * 1000 }) : undefined
  const forget = (siteId: string, emailHash: string) => void answers?.delete(`${siteId}\n${emailHash}`)
  const saveResult: EmailCheck['saveResult'] = async (siteId, emailHash, info, device) => {
    forget(siteId, emailHash)
    await upsertResult(ctx.prepared, siteId, emailHash, info, device)
  }

  /**
   * The stored assessment, made complete: one identified before this plugin ran is assessed from the offline signals
   * and cached domain answers; one that still lacks the domain's age or mail server is checked live (RDAP and MX now,
   * within the site's lookups per minute). Whatever changed is saved, so the next check answers from it.
   */
  const completeStored = async (siteId: string, email: string, emailHash: string, stored: EmailInfo | undefined): Promise<EmailInfo> => {
    let info = stored ?? await assessor.offline(siteId, email)
    if (isIncomplete(info)) info = await assessor.live(siteId, email)
    if (info === stored) return info
    forget(siteId, emailHash)
    await saveCompletedResult(ctx.prepared, siteId, emailHash, info, riskOf(info))
    return info
  }

  return {
    saveResult,
    forget,
    async check(siteId, email) {
      const emailHash = sha256Hex(email)
      const cacheKey = `${siteId}\n${emailHash}`
      const cached = answers?.get(cacheKey)
      if (cached) return cached
      const stored = await findStoredEmail(ctx.prepared, siteId, emailHash)
      if (stored) {
        const emailInfo = await completeStored(siteId, email, emailHash, stored.emailInfo)
        const answer = { emailInfo, userInfo: stored.userInfo, ipInfo: stored.ipInfo }
        // An answer still waiting for its lookups is not kept: the next check tries them again. A repeat is stored.
        if (!isIncomplete(emailInfo)) answers?.set(cacheKey, { ...answer, emailInfo: { ...emailInfo, answered_from: 'stored' } })
        return answer
      }
      const emailInfo = await assessor.live(siteId, email)
      await saveLiveCheck(ctx.prepared, siteId, email, emailHash, emailInfo, riskOf(emailInfo))
      return { emailInfo, userInfo: null, ipInfo: null }
    },
  }
}
