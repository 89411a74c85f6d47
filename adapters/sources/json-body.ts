/**
 * Reads a webhook's raw bytes as one JSON object, turning every way it can fail into a SourceInputError
 * that says what was wrong with the body.
 */
import { inspectJson } from '../../core/http/text.ts'
import { SourceInputError } from '../../core/registry.ts'
import type { JsonObject } from './fields.ts'

const utf8 = new TextDecoder('utf-8', { fatal: true })

export interface ReadJsonOptions {
  /**
   * Keep integers beyond 2^53 as their digits (a string) instead of rounding them: Shopify order, customer and
   * product ids are 64-bit and JSON.parse would change their last digits (820982911946154508 → …500).
   */
  bigIntegersAsText?: boolean
}

export function readJsonObject(raw: Uint8Array, options: ReadJsonOptions = {}): JsonObject {
  let text: string
  try {
    text = utf8.decode(raw)
  }
  catch {
    throw new SourceInputError('body: must be UTF-8 text')
  }
  if (text.trim() === '') throw new SourceInputError('body: is empty; expected a JSON object')
  let body: unknown
  try {
    body = JSON.parse(options.bigIntegersAsText ? quoteUnsafeIntegers(text) : text)
  }
  catch {
    throw new SourceInputError('body: must be valid JSON')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new SourceInputError('body: must be a JSON object')
  // No webhook nests deep; a body that does would overflow the stack where its parts are written out as JSON.
  const tooDeep = inspectJson(body, { strings: false })
  if (tooDeep.length) throw new SourceInputError(tooDeep.join('; '), tooDeep)
  return body as JsonObject
}

/** Wraps in quotes every integer literal outside strings that a double cannot hold exactly. */
export function quoteUnsafeIntegers(text: string): string {
  let out = ''
  let copied = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5C) i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
      continue
    }
    if (c === 0x22) {
      inString = true
      continue
    }
    if (c !== 0x2D && (c < 0x30 || c > 0x39)) continue
    let end = i + 1
    while (end < text.length && isNumberChar(text.charCodeAt(end))) end++
    const token = text.slice(i, end)
    if (/^-?\d{16,}$/.test(token) && !Number.isSafeInteger(Number(token))) {
      out += `${text.slice(copied, i)}"${token}"`
      copied = end
    }
    i = end - 1
  }
  return copied === 0 ? text : out + text.slice(copied)
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2E || c === 0x65 || c === 0x45 || c === 0x2B || c === 0x2D
}
