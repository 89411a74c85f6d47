/**
 * What the delivery detail view may show of a request dcgate sent. Redaction works on fields, never on text: a
 * field that holds a credential, the buyer's IP address or user agent (in clear or hashed: a hashed IPv4 address is
 * reversed by trying the 2^32 addresses) is replaced whole, and every other field is shown as it was sent. A URL,
 * the request's own and any in the body (`event_source_url`), is shown as origin and path: its query and fragment
 * may carry what the page had there (`?email=…&token=…`). Replacing text instead once blanked `127.0.0.1` inside
 * the platform's URL because a test visitor had that address.
 */
import { createHash } from 'node:crypto'
import type { PlatformRequest } from '../../../core/delivery/types.ts'

export interface ShownRequest { method: string, url: string, headers: [string, string][], body: string }

/** What is hidden besides credentials: the buyer's browser, as the stored conversion has it. */
export interface BuyerBrowser { ip?: string, userAgent?: string }

export const REDACTED = '[redacted]'
const SECRET_OPTION = /token|secret|key|password|credential/i
const SECRET_HEADER = /^(authorization|cookie|x-api-key|api-key|x-goog-api-key|developer-token|x-dc-key)$/i
/** Body keys that name an IP address or a user agent, in the spellings the adapters send (ip, client_ip_address, ipAddress, user_agent…). */
const BROWSER_KEY = /(^|[_-])ip($|[_-])|ip_?address|user_?agent/i
/** A credential shorter than this is not looked for inside a longer field (a 3-letter value occurs anywhere). */
const MIN_SECRET_LENGTH = 8

/** The request as the detail view shows it. */
export function toShownRequest(built: PlatformRequest, options: unknown, browser: BuyerBrowser): ShownRequest {
  const secrets = new Set(secretsOf(options).filter((s) => s.length >= 4))
  const hidden = new Set([...secrets, ...browserForms(browser)])
  return {
    method: built.method,
    url: shownUrl(built.url, secrets) ?? REDACTED,
    headers: Object.entries(built.headers).map(([name, value]) => [name, SECRET_HEADER.test(name) ? REDACTED : shownString(value, hidden, secrets)]),
    body: shownBody(built.body, hidden, secrets),
  }
}

/** Every string under a credential-like key of the options, at any depth. */
export function secretsOf(options: unknown, underSecret = false): string[] {
  if (typeof options === 'string') return underSecret ? [options] : []
  if (Array.isArray(options)) return options.flatMap((item) => secretsOf(item, underSecret))
  if (options && typeof options === 'object') {
    return Object.entries(options).flatMap(([key, value]) => secretsOf(value, underSecret || (SECRET_OPTION.test(key) && !/url$/i.test(key))))
  }
  return []
}

/** The IP address and user agent as an adapter may send them: as stored, trimmed, lower case, and SHA-256 of each. */
function browserForms({ ip, userAgent }: BuyerBrowser): string[] {
  const plain = [ip, userAgent].flatMap((value) => value ? [value, value.trim(), value.trim().toLowerCase()] : [])
  return plain.flatMap((value) => {
    const hash = createHash('sha256').update(value).digest('hex')
    return [value, hash, hash.toUpperCase()]
  })
}

function shownBody(body: string, hidden: ReadonlySet<string>, secrets: ReadonlySet<string>): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  }
  catch {
    return '[not shown: the body is not JSON, so its fields cannot be told apart]'
  }
  return JSON.stringify(shownValue(parsed, hidden, secrets), null, 2)
}

function shownValue(value: unknown, hidden: ReadonlySet<string>, secrets: ReadonlySet<string>): unknown {
  if (typeof value === 'string') return shownString(value, hidden, secrets)
  if (Array.isArray(value)) return value.map((item) => shownValue(item, hidden, secrets))
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, BROWSER_KEY.test(key) && field !== null && typeof field !== 'object'
      ? REDACTED
      : shownValue(field, hidden, secrets)]))
  }
  return value
}

/** One field: hidden whole when it is, or holds, something hidden; a URL as origin and path. */
function shownString(value: string, hidden: ReadonlySet<string>, secrets: ReadonlySet<string>): string {
  if (hidden.has(value) || hidden.has(value.trim())) return REDACTED
  for (const secret of secrets) if (secret.length >= MIN_SECRET_LENGTH && value.includes(secret)) return REDACTED
  return shownUrl(value, secrets) ?? value
}

/** An http(s) URL as origin and path, a path segment that is a credential redacted; undefined for anything else. */
function shownUrl(value: string, secrets: ReadonlySet<string>): string | undefined {
  if (!/^https?:\/\//i.test(value) || !URL.canParse(value)) return undefined
  const url = new URL(value)
  const path = url.pathname.split('/').map((segment) => {
    const decoded = safeDecode(segment)
    return secrets.has(segment) || secrets.has(decoded) ? REDACTED : segment
  }).join('/')
  return `${url.origin}${path}`
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment)
  }
  catch {
    return segment
  }
}
