/**
 * Text PostgreSQL can store. It refuses a NUL character in text and jsonb, and an unpaired UTF-16 surrogate (half
 * of an emoji cut in two) in jsonb; either made a 500, or stopped every later capture batch. A route refuses such
 * text with its 4xx, naming the field, or cleans it where the sender cannot fix its payload (the tracking script, the
 * webhook sources): NUL removed, an unpaired surrogate replaced by U+FFFD, as `String.prototype.toWellFormed` does.
 */

declare global {
  // ES2024, in Node.js since 20; the project's TypeScript lib is older.
  interface String {
    isWellFormed: () => boolean
    toWellFormed: () => string
  }
}

/** `refuse`: a 4xx naming the field (the default). `clean`: NUL removed, unpaired surrogates → U+FFFD. */
export type TextPolicy = 'refuse' | 'clean'

/** Deeper JSON is refused: no body of ours nests past a few levels, and JSON.stringify overflows the stack at thousands. */
export const MAX_JSON_DEPTH = 32

const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/
const HEX4 = /^[0-9a-fA-F]{4}$/

/**
 * Whether valid JSON text may decode to an unstorable character: only a `\u0000` or `\ud800`–`\udfff` escape can
 * make one (UTF-8 decoding turns broken bytes into U+FFFD; a raw NUL is not valid JSON). Cheap, so the common body
 * is never walked: about 40 ns for a /collect body, where a search for a raw NUL took 330 ns once the text held one
 * character beyond Latin-1 (an en dash in a title).
 */
export function mayHoldUnstorableText(json: string): boolean {
  return json.includes('\\u') && SUSPECT_ESCAPE.test(json)
}

/**
 * The JSON text with its NUL escapes (and raw NULs) removed and its unpaired surrogate escapes replaced by `\ufffd`.
 * Escaped pairs stay; an escaped backslash is skipped, so `\\u0000` (the six characters) stays too.
 */
export function cleanJsonText(json: string): string {
  let out = ''
  let copied = 0
  for (let i = json.indexOf('\\'); i !== -1; i = json.indexOf('\\', i)) {
    if (json[i + 1] !== 'u') {
      i += 2
      continue
    }
    const code = escapedUnit(json, i)
    if (code === undefined) {
      i += 2
      continue
    }
    if (code >= 0xD800 && code <= 0xDBFF && isLowSurrogate(escapedUnit(json, i + 6))) {
      i += 12
      continue
    }
    const unstorable = code === 0 || (code >= 0xD800 && code <= 0xDFFF)
    if (unstorable) {
      out += json.slice(copied, i) + (code === 0 ? '' : '\\ufffd')
      copied = i + 6
    }
    i += 6
  }
  const cleaned = copied === 0 ? json : out + json.slice(copied)
  return cleaned.includes('\0') ? cleaned.replaceAll('\0', '') : cleaned
}

function escapedUnit(json: string, at: number): number | undefined {
  if (json[at] !== '\\' || json[at + 1] !== 'u') return undefined
  const hex = json.slice(at + 2, at + 6)
  return HEX4.test(hex) ? Number.parseInt(hex, 16) : undefined
}

const isLowSurrogate = (code: number | undefined) => code !== undefined && code >= 0xDC00 && code <= 0xDFFF

/** What is wrong with one string, or undefined when PostgreSQL can store it. */
export function unstorableReason(text: string): string | undefined {
  if (text.includes('\0')) return 'contains a NUL character'
  if (!text.isWellFormed()) return 'contains an unpaired surrogate (half of a UTF-16 pair)'
  return undefined
}

/** The string as PostgreSQL can store it. */
export function toStorableText(text: string): string {
  const wellFormed = text.isWellFormed() ? text : text.toWellFormed()
  return wellFormed.includes('\0') ? wellFormed.replaceAll('\0', '') : wellFormed
}

interface Frame { value: object, path: string, depth: number }

/** How many problems are named at most; past that the list would only grow the answer. */
const MAX_PROBLEMS = 10

/**
 * Walks a parsed JSON value without recursion (a 1 MiB body can nest half a million levels) and names each place
 * that breaks a rule: nesting deeper than MAX_JSON_DEPTH (always), and, with `strings`, an unstorable string or
 * object key (a key is never repeated in the path: it is not fit to print). Paths are written like valibot's
 * (`properties.items[0].name`), under `prefix` (`query`, `params`) if given; the top of a body is `body`.
 */
export function inspectJson(input: unknown, options: { strings: boolean, prefix?: string }): string[] {
  const problems = new Set<string>()
  const top = options.prefix ?? ''
  const note = (path: string, reason: string) => {
    if (problems.size < MAX_PROBLEMS) problems.add(`${path || 'body'}: ${reason}`)
  }
  const checkString = (text: string, path: () => string) => {
    const reason = options.strings ? unstorableReason(text) : undefined
    if (reason) note(path(), reason)
  }
  if (typeof input === 'string') checkString(input, () => top)
  if (typeof input !== 'object' || input === null) return [...problems]
  const stack: Frame[] = [{ value: input, path: top, depth: 1 }]
  while (stack.length > 0 && problems.size < MAX_PROBLEMS) {
    const { value, path, depth } = stack.pop()!
    if (depth > MAX_JSON_DEPTH) {
      note(topField(path, top), `nests deeper than ${MAX_JSON_DEPTH} levels`)
      continue
    }
    // A child's path is written only for a container or a problem: most leaves need none.
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        const child: unknown = value[index]
        if (typeof child === 'string') checkString(child, () => `${path}[${index}]`)
        else if (typeof child === 'object' && child !== null) stack.push({ value: child, path: `${path}[${index}]`, depth: depth + 1 })
      }
      continue
    }
    for (const key in value) {
      const keyReason = options.strings ? unstorableReason(key) : undefined
      if (keyReason) {
        note(path, `has a key that ${keyReason}`)
        continue
      }
      const child = (value as Record<string, unknown>)[key]
      if (typeof child === 'string') checkString(child, () => (path ? `${path}.${key}` : key))
      else if (typeof child === 'object' && child !== null) stack.push({ value: child, path: path ? `${path}.${key}` : key, depth: depth + 1 })
    }
  }
  return [...problems]
}

/**
 * Whether a parsed JSON value nests deeper than MAX_JSON_DEPTH: inspectJson's walk without its paths, for the body of
 * every request (inspectJson then names the field, for the rare body that does).
 */
export function nestsTooDeep(input: unknown): boolean {
  if (typeof input !== 'object' || input === null) return false
  const values: object[] = [input]
  const depths: number[] = [1]
  while (values.length > 0) {
    const value = values.pop()!
    const depth = depths.pop()!
    if (depth > MAX_JSON_DEPTH) return true
    if (Array.isArray(value)) {
      for (const child of value as unknown[]) {
        if (typeof child !== 'object' || child === null) continue
        values.push(child)
        depths.push(depth + 1)
      }
      continue
    }
    for (const key in value) {
      const child = (value as Record<string, unknown>)[key]
      if (typeof child !== 'object' || child === null) continue
      values.push(child)
      depths.push(depth + 1)
    }
  }
  return false
}

/** The first field under the prefix (`properties` of `properties.a.b[0]…`): a path 32 levels deep names nothing useful. */
function topField(path: string, prefix: string): string {
  const rest = prefix ? path.slice(prefix.length + 1) : path
  const field = /^[^.[]*/.exec(rest)![0]
  return prefix ? (field ? `${prefix}.${field}` : prefix) : field
}

/** Whether every string of a flat record (a query or path parameters), keys too, can be stored as it is. */
export function isStorableRecord(input: Record<string, string>): boolean {
  for (const key in input) if (unstorableReason(key) || unstorableReason(input[key]!)) return false
  return true
}

/** The record with every string as PostgreSQL can store it, keys too; the same record when nothing needs it. */
export function toStorableRecord(input: Record<string, string>): Record<string, string> {
  if (isStorableRecord(input)) return input
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(input)) out[toStorableText(key)] = toStorableText(value)
  return out
}

const NUL = 0x00
const BACKSLASH_U = Buffer.from('\\u')
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * A raw JSON body (a webhook's bytes, after its signature was checked) cleaned as cleanJsonText does; the same bytes
 * when there is nothing to clean, or when they are not UTF-8 (the reader refuses those itself).
 */
export function toStorableJsonBytes(raw: Uint8Array): Uint8Array {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  if (!bytes.includes(BACKSLASH_U) && !bytes.includes(NUL)) return raw
  let text: string
  try {
    text = strictUtf8.decode(bytes)
  }
  catch {
    return raw
  }
  const cleaned = cleanJsonText(text)
  return cleaned === text ? raw : Buffer.from(cleaned, 'utf8')
}
