import { LRUCache } from 'lru-cache'
import { sha256Hex } from '../../core/identity/hash.ts'
import type { PluginContext } from '../../core/plugin.ts'
import type { EmailAssessor } from './assess.ts'
import type { DeviceFingerprint, EmailCheckData, EmailInfo } from './result.ts'
import { INCOMPLETE_TAGS } from './score.ts'
import { findStoredEmail } from './stored.ts'

/** Keeps an assessment (a newer one replaces an older one). */
const SAVE_RESULT = {
  name: 'email_risk_save_result_v1',
  text: `insert into email_risk_results as r (id, site_id, email_hash, email_info, device, checked_at)
    values (gen_random_uuid(), $1, $2, $3::jsonb, $4::jsonb, now())
    on conflict (site_id, email_hash) do update set email_info = excluded.email_info, device = coalesce(excluded.device, r.device), checked_at = now()`,
}

/**
 * A live check becomes a server-side identification (listed among identified users as server_sdk) with its
 * assessment. Committed without waiting for the WAL flush: lost in a database crash, the next check is live again.
 */
const SAVE_LIVE_CHECK = {
  name: 'email_risk_save_live_check_v1',
  text: `with async_commit as materialized (select set_config('synchronous_commit', 'off', true)),
    result as (${SAVE_RESULT.text})
    insert into identified_users (id, site_id, email, email_hash, source, ip_is_vpn, email_risk_score, email_risk_label, is_disposable, identified_at, last_seen_at)
    select gen_random_uuid(), $1, $5, $2, 'server_sdk', false, $6, $7, $8, now(), now() from async_commit
    on conflict (site_id, email_hash) do nothing`,
}

/**
 * A stored assessment completed by a private check (it was scored offline): kept, and the identified user's risk
 * columns follow it, so the list of identified users shows the complete verdict.
 */
const SAVE_COMPLETED = {
  name: 'email_risk_save_completed_v1',
  text: `with result as (${SAVE_RESULT.text})
    update identified_users set email_risk_score = $5, email_risk_label = $6, is_disposable = $7
    where site_id = $1 and email_hash = $2`,
}

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

export function createEmailCheck(ctx: PluginContext, assessor: EmailAssessor, options: { answerCacheSeconds: number }): EmailCheck {
  const answers = options.answerCacheSeconds > 0 ? new LRUCache<string, EmailCheckData>({ max: CACHED_ANSWERS, ttl: options.answerCacheSeconds * 1000 }) : undefined
  const forget = (siteId: string, emailHash: string) => void answers?.delete(`${siteId}\n${emailHash}`)
  const saveResult: EmailCheck['saveResult'] = async (siteId, emailHash, info, device) => {
    forget(siteId, emailHash)
    await ctx.prepared(SAVE_RESULT, [siteId, emailHash, JSON.stringify(info), device ? JSON.stringify(device) : null])
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
    await ctx.prepared(SAVE_COMPLETED, [
      siteId, emailHash, JSON.stringify(info), null,
      info.risk_score, info.risk_label, info.fraud_signals.disposable_domain,
    ])
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
      const stored = await findStoredEmail(ctx, siteId, emailHash)
      if (stored) {
        const emailInfo = await completeStored(siteId, email, emailHash, stored.emailInfo)
        const answer = { emailInfo, userInfo: stored.userInfo, ipInfo: stored.ipInfo }
        // An answer still waiting for its lookups is not kept: the next check tries them again. A repeat is stored.
        if (!isIncomplete(emailInfo)) answers?.set(cacheKey, { ...answer, emailInfo: { ...emailInfo, answered_from: 'stored' } })
        return answer
      }
      const emailInfo = await assessor.live(siteId, email)
      await ctx.prepared(SAVE_LIVE_CHECK, [
        siteId, emailHash, JSON.stringify(emailInfo), null, email,
        emailInfo.risk_score, emailInfo.risk_label, emailInfo.fraud_signals.disposable_domain,
      ])
      return { emailInfo, userInfo: null, ipInfo: null }
    },
  }
}
