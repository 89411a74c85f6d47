/**
 * Builds hits and identify fields that pass the server's schema: a site's bad input is trimmed or dropped here,
 * because one invalid hit would make the server reject the whole batch. Pure: no DOM.
 */
import type { InferInput } from 'valibot'
import type { CollectBody, IdentifyBody } from '../protocol.ts'
import { randomId } from './ids.ts'

export type CollectInput = InferInput<typeof CollectBody>
export type IdentifyInput = InferInput<typeof IdentifyBody>
export type Hit = CollectInput['hits'][number]
export type PageViewHit = Extract<Hit, { t: 'pageview' }>
export type EventHit = Extract<Hit, { t: 'event' }>
type PropValue = string | number | boolean | null

const cut = (value: string, max: number): string => value.slice(0, max)

export function pageView(url: string, ts: number, ref?: string, title?: string): PageViewHit {
  const hit: PageViewHit = { t: 'pageview', hid: randomId(), ts, url: cut(url, 4096) }
  if (ref) hit.ref = cut(ref, 4096)
  if (title) hit.title = cut(title, 500)
  return hit
}

/** At most 50 properties with keys up to 100 characters; strings cut at 1000; other values dropped. */
export function cleanProps(props: unknown): Record<string, PropValue> | undefined {
  if (!props || typeof props !== 'object') return undefined
  const out: Record<string, PropValue> = {}
  let count = 0
  for (const key of Object.keys(props)) {
    const value: unknown = (props as Record<string, unknown>)[key]
    if (count >= 50 || key.length > 100) continue
    if (typeof value === 'string') out[key] = cut(value, 1000)
    else if (typeof value === 'number' || typeof value === 'boolean' || value === null) out[key] = value
    else continue
    count++
  }
  return count ? out : undefined
}

/** `dcutils.track(name, props, { id })` (or `{ eventID }`, as fbq takes it); undefined when the name is not a non-empty string. */
export function trackedEvent(name: unknown, props: unknown, options: unknown, url: string, ts: number): EventHit | undefined {
  if (typeof name !== 'string' || !name) return undefined
  const hit: EventHit = { t: 'event', hid: randomId(), ts, url: cut(url, 4096), name: cut(name, 255) }
  const cleaned = cleanProps(props)
  if (cleaned) hit.props = cleaned
  const given = options && typeof options === 'object' ? options as { id?: unknown, eventID?: unknown } : {}
  const id = given.id ?? given.eventID
  if ((typeof id === 'string' && id) || typeof id === 'number') hit.id = cut(String(id), 255)
  return hit
}

/** A trimmed email, or undefined when it cannot be one (the server checks it properly). */
export function cleanEmail(email: unknown): string | undefined {
  const value = typeof email === 'string' ? email.trim() : ''
  return /^[^\s@]+@[^\s@]+$/.test(value) && value.length <= 320 ? value : undefined
}

/** Optional identify fields: phone, first_name, last_name, non-empty strings only. */
export function cleanFields(fields: unknown): IdentifyInput['fields'] {
  if (!fields || typeof fields !== 'object') return undefined
  const out: NonNullable<IdentifyInput['fields']> = {}
  const source = fields as Record<string, unknown>
  for (const [key, max] of [['phone', 64], ['first_name', 255], ['last_name', 255]] as const) {
    const value = source[key]
    if (typeof value === 'string' && value.trim()) out[key] = cut(value.trim(), max)
  }
  return Object.keys(out).length ? out : undefined
}

export type Identity = Pick<IdentifyInput, 'email' | 'fields'>

/** What /identify takes from the page: a usable email with the cleaned fields; undefined without one. */
export function identity(email: unknown, fields: unknown): Identity | undefined {
  const clean = cleanEmail(email)
  const cleanedFields = cleanFields(fields)
  return clean ? cleanedFields ? { email: clean, fields: cleanedFields } : { email: clean } : undefined
}
