/**
 * First-party storage: localStorage, with a cookie of the same name when localStorage fails or when asked to
 * mirror (the visitor id). Cookies are host-only, SameSite=Lax, 400 days (the browsers' cap).
 * Nothing here is called before the visitor's consent allows it (see consent.ts), except reading the choice.
 */
import { readCookie } from './cookie.ts'

const MAX_AGE = 400 * 86_400

function setCookie(key: string, value: string, maxAge: number): void {
  document.cookie = `${key}=${encodeURIComponent(value)};path=/;max-age=${maxAge};samesite=lax${location.protocol === 'https:' ? ';secure' : ''}`
}

export function get(key: string): string | undefined {
  try {
    const value = localStorage.getItem(key)
    if (value !== null) return value
  } catch {}
  return readCookie(document.cookie, key)
}

export function set(key: string, value: string, mirror = false): void {
  let stored = false
  try {
    localStorage.setItem(key, value)
    stored = true
  } catch {}
  if (mirror || !stored) setCookie(key, value, MAX_AGE)
}

export function remove(key: string): void {
  try {
    localStorage.removeItem(key)
  } catch {}
  if (readCookie(document.cookie, key) !== undefined) setCookie(key, '', 0)
}
