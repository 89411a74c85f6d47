import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { getCookie, setCookie, type H3Event } from 'h3'

export const FORM_COOKIE = 'dcgate_dashboard_form'
const TOKEN_SHAPE = /^[\w-]{43}$/

/** Whether two secrets are equal, in constant time (digests, so lengths never leak either). */
export function sameSecret(given: string | null | undefined, expected: string): boolean {
  if (!given) return false
  const digest = (value: string) => createHash('sha256').update(value).digest()
  return timingSafeEqual(digest(given), digest(expected))
}

/**
 * The CSRF token of the signed-out forms (sign-in, the emailed link's button): a double-submit cookie, HttpOnly and
 * SameSite=Strict, whose value the form repeats. Signed-in forms use the session's token instead (session.ts).
 */
export function formToken(event: H3Event, secure: boolean): string {
  const existing = getCookie(event, FORM_COOKIE)
  if (existing && TOKEN_SHAPE.test(existing)) return existing
  const token = randomBytes(32).toString('base64url')
  setCookie(event, FORM_COOKIE, token, { httpOnly: true, sameSite: 'strict', path: '/dashboard', secure })
  return token
}

export function formTokenMatches(event: H3Event, form: URLSearchParams): boolean {
  const cookie = getCookie(event, FORM_COOKIE)
  return Boolean(cookie && TOKEN_SHAPE.test(cookie)) && sameSecret(form.get('csrf'), cookie!)
}
