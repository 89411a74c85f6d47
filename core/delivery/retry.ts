import type { DeliveryOutcome } from './types.ts'

export interface RetryPolicy {
  maxAttempts: number
  retryBaseMs: number
  retryMaxMs: number
}

export type NextStep =
  | { status: 'sent' }
  | { status: 'failed', error: string }
  | { status: 'retrying', error: string, nextAttemptAt: Date }

/**
 * After attempt number `attempts`: sent, retry later (exponential backoff, jittered between half and all of it, at least the
 * platform's Retry-After), or failed: rejected by the platform, out of attempts, or the retry would land
 * after the platform's event-age window closes.
 */
export function nextStep(outcome: DeliveryOutcome, attempts: number, occurredAt: Date, maxEventAgeDays: number | undefined, policy: RetryPolicy, now = Date.now(), random = Math.random): NextStep {
  if (outcome.status === 'sent') return { status: 'sent' }
  if (outcome.status === 'rejected') return { status: 'failed', error: outcome.message }
  if (attempts >= policy.maxAttempts) return { status: 'failed', error: `${outcome.message} (gave up after ${attempts} attempts)` }
  const backoff = Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** (attempts - 1))
  const delay = Math.max(outcome.retryAfterMs ?? 0, Math.round(backoff / 2 + random() * backoff / 2))
  const nextAttemptAt = new Date(now + delay)
  const closes = maxEventAgeDays === undefined ? Infinity : occurredAt.getTime() + maxEventAgeDays * 86_400_000
  if (nextAttemptAt.getTime() > closes) {
    return { status: 'failed', error: `${outcome.message} (a retry would fall outside the platform's ${maxEventAgeDays}-day event window)` }
  }
  return { status: 'retrying', error: outcome.message, nextAttemptAt }
}
