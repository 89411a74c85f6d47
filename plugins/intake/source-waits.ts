/**
 * The source route's side of conversions that wait for a withdrawal (core/delivery/queries/waits.ts): a verified
 * body's withdrawals are applied before its conversions are stored, and a conversion stored waiting is marked so a
 * withdrawal that came first, or comes later, removes it before it is sent.
 */
import * as v from 'valibot'
import { DUPLICATE, type AcceptResult } from '../../core/delivery/pipeline.ts'
import { markWaiting, withdrawWaiting } from '../../core/delivery/queries/waits.ts'
import type { RunPrepared } from '../../core/db/prepared.ts'
import type { SourceConversion, SourceWithdrawal } from '../../core/registry.ts'

export const WithdrawalAnswer = v.object({
  message_id: v.string(),
  outcome: v.pipe(v.picklist(['removed', 'recorded']), v.description('removed: the conversion waiting under this messageId was deleted before it was sent; recorded: none was waiting, and one stored later is removed')),
})
export type WithdrawalAnswer = v.InferOutput<typeof WithdrawalAnswer>

/** Each withdrawal in order; one body brings few. */
export async function applyWithdrawals(prepared: RunPrepared, siteId: string, withdrawals: readonly SourceWithdrawal[]): Promise<WithdrawalAnswer[]> {
  const answers: WithdrawalAnswer[] = []
  for (const { messageId, reason } of withdrawals) {
    const removed = await withdrawWaiting(prepared, siteId, messageId, reason)
    answers.push({ message_id: messageId, outcome: removed ? 'removed' : 'recorded' })
  }
  return answers
}

/** After `accept` stored a conversion that waits: marked waiting, or removed at once when its withdrawal came first. */
export async function settleWaiting(prepared: RunPrepared, siteId: string, conversion: SourceConversion, result: AcceptResult): Promise<AcceptResult> {
  const seconds = conversion.awaitsWithdrawalSeconds
  if (seconds === undefined || result.message === DUPLICATE) return result
  const withdrawn = await markWaiting(prepared, siteId, conversion.messageId)
  if (withdrawn !== undefined) return { ...result, success: true, message: `withdrawn before it was sent: ${withdrawn}`, errors: undefined }
  if (!result.success || !result.message.startsWith('stored; delivering')) return result
  return { ...result, message: `stored; delivering in ${seconds} s unless a later webhook withdraws it` }
}
