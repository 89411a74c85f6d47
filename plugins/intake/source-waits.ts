/**
 * The source route's side of conversions that wait for a withdrawal (core/delivery/queries/waits.ts): a verified
 * body's withdrawals are applied before its conversions are stored, and a conversion that waits is checked once
 * stored, so a withdrawal that came first removes it before it is sent.
 */
import * as v from 'valibot'
import { DUPLICATE, type AcceptResult } from '../../core/delivery/pipeline.ts'
import { settleWaitingConversion, withdrawWaiting } from '../../core/delivery/queries/waits.ts'
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
  for (const { messageId, reason, eventTypes } of withdrawals) {
    const removed = await withdrawWaiting(prepared, siteId, messageId, reason, eventTypes)
    answers.push({ message_id: messageId, outcome: removed ? 'removed' : 'recorded' })
  }
  return answers
}

/**
 * After `accept` of a conversion that waits (stored, or a repeat: the first try may have been cut before this ran):
 * removed at once when its withdrawal came first, else answered with its wait.
 */
export async function settleWaiting(prepared: RunPrepared, siteId: string, conversion: SourceConversion, eventType: string, result: AcceptResult): Promise<AcceptResult> {
  const withdrawn = await settleWaitingConversion(prepared, siteId, conversion.messageId, eventType)
  if (withdrawn !== undefined) return { ...result, success: true, message: `withdrawn before it was sent: ${withdrawn}`, errors: undefined }
  if (result.message === DUPLICATE || !result.success || !result.message.startsWith('stored; delivering')) return result
  return { ...result, message: `stored; delivering in ${conversion.awaitsWithdrawalSeconds} s unless a later webhook withdraws it` }
}

/**
 * Whether a conversion answered as a repeat should be stored once more: its body withdrew the copy holding its
 * messageId (a Checkout Session replacing its PaymentIntent's), and that copy was stored after the withdrawal. It is
 * removed now, by this call or by its own webhook's check, whichever locked it first; unless a delivery of it was
 * attempted, in which case the second try is a repeat again.
 */
export async function replacedAfterRace(prepared: RunPrepared, siteId: string, conversion: SourceConversion, result: AcceptResult, withdrawals: readonly SourceWithdrawal[] | undefined): Promise<boolean> {
  const own = result.message === DUPLICATE ? withdrawals?.find((w) => w.messageId === conversion.messageId) : undefined
  if (!own) return false
  await withdrawWaiting(prepared, siteId, own.messageId, own.reason, own.eventTypes)
  return true
}
