/** Visitor and session ids. Pure: no DOM, so it is tested in node. */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** A session ends after 30 minutes without a hit. */
export const SESSION_TIMEOUT_MS = 30 * 60_000

/** 22 URL-safe characters (132 random bits) from crypto.getRandomValues. */
export function randomId(bytes: Uint8Array = crypto.getRandomValues(new Uint8Array(22))): string {
  let id = ''
  for (let i = 0; i < bytes.length; i++) id += ALPHABET.charAt(bytes[i]! & 63)
  return id
}

/** The protocol's id shape: 8 to 64 URL-safe characters. */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{8,64}$/.test(value)
}

export interface Session { id: string, last: number }

/** Reads a stored `<id>.<last hit ms>`; anything else is no session. */
export function parseSession(stored: string | undefined): Session | undefined {
  const [id, last] = (stored || '').split('.')
  return isId(id) && last && /^\d+$/.test(last) ? { id, last: +last } : undefined
}

export function formatSession(session: Session): string {
  return `${session.id}.${session.last}`
}

/** The session for a hit at `now`: the kept one, unless 30 minutes or more passed since its last hit. */
export function nextSession(kept: Session | undefined, now: number, newId: () => string = randomId): Session {
  return { id: kept && now - kept.last < SESSION_TIMEOUT_MS ? kept.id : newId(), last: now }
}
