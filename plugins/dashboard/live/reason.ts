/**
 * Why a request was refused, as the live events store it: the message the client was answered with (or a batch's
 * refused messages), cut to 1000 characters. The answers already name fields, never values (core/config/issues.ts);
 * an email address that still slips into one is masked as the other pages mask it.
 */
import type { AnsweredRequest } from '../../../core/http/answered.ts'
import { maskEmailDistinct } from '../../../core/mail/mask.ts'

const MAX_REASON = 1000
const EMAIL = /[^\s@"'<>;,]+@[^\s@"'<>;,]+\.[^\s@"'<>;,]+/g

export function shownReason(answered: AnsweredRequest): string | null {
  const part = answered.partlyRefused
  const text = part
    ? `${part.refused} ${part.refused === 1 ? 'message' : 'messages'} refused: ${[...new Set(part.reasons)].join('; ')}`
    : answered.status >= 400 ? answered.message ?? '' : ''
  if (!text) return null
  const masked = text.replace(EMAIL, (email) => maskEmailDistinct(email))
  return masked.length > MAX_REASON ? `${masked.slice(0, MAX_REASON - 1)}…` : masked
}
