/**
 * Pure: the v2 list requests the poller sends and the pages they answer. Deals: `GET /api/v2/deals?stage_id=…
 * &updated_since=…&sort_by=update_time&sort_direction=asc`; persons by id: `GET /api/v2/persons?ids=…` (at most 100
 * ids); persons changed: `GET /api/v2/persons?updated_since=…`. Answers are `{ success, data: [...],
 * additional_data: { next_cursor } }`, a null or absent next_cursor meaning the last page.
 */
import { isObject } from '../../shared/helpers.ts'
import { parseInstant } from '../shared/window.ts'
import type { PipedriveOptions } from './index.ts'
import { PIPEDRIVE_API_VERSION } from './version.ts'

/** Pipedrive's cap on `ids` in one list request. */
export const IDS_PER_REQUEST = 100

export interface Page<T> {
  items: T[]
  nextCursor?: string
}

export interface Deal {
  id: number
  personId: number | undefined
  updatedAt: Date | undefined
}

export interface Person {
  id: number
  /** The primary email, else the first one. */
  email: string | undefined
  updatedAt: Date | undefined
  labelIds: unknown[]
  customFields: Record<string, unknown>
}

/** RFC 3339 in whole seconds, as the v2 filters document it (2025-01-01T10:20:00Z); rounded down, never later. */
export function toRfc3339(instant: Date): string {
  return `${instant.toISOString().slice(0, 19)}Z`
}

export function dealsUrl(options: PipedriveOptions, stageId: number, since: Date, cursor: string | undefined): string {
  return listUrl(options, 'deals', { stage_id: String(stageId), updated_since: toRfc3339(since), sort_by: 'update_time', sort_direction: 'asc' }, cursor)
}

export function personsByIdUrl(options: PipedriveOptions, ids: readonly number[], cursor: string | undefined): string {
  return listUrl(options, 'persons', { ids: ids.join(',') }, cursor, Math.min(options.pageSize, IDS_PER_REQUEST))
}

export function personsChangedUrl(options: PipedriveOptions, since: Date, cursor: string | undefined): string {
  const field = options.personField?.key
  const customFields: Record<string, string> = field && field !== 'label_ids' ? { custom_fields: field } : {}
  return listUrl(options, 'persons', { updated_since: toRfc3339(since), sort_by: 'update_time', sort_direction: 'asc', ...customFields }, cursor)
}

/** `{ success: true, data: [...], additional_data }` as items and the next cursor; undefined if not that shape. */
export function readPage<T>(json: unknown, read: (item: Record<string, any>) => T | undefined): Page<T> | undefined {
  if (!isObject(json) || json.success !== true || !Array.isArray(json.data)) return undefined
  const items = json.data.filter(isObject).map(read).filter((item): item is T => item !== undefined)
  const next = isObject(json.additional_data) ? json.additional_data.next_cursor : undefined
  return typeof next === 'string' && next ? { items, nextCursor: next } : { items }
}

export function readDeal(item: Record<string, any>): Deal | undefined {
  if (typeof item.id !== 'number') return undefined
  // v2 gives person_id as a number; v1 (and some proxies) as { value, name, email }.
  const person = isObject(item.person_id) ? item.person_id.value : item.person_id
  return { id: item.id, personId: typeof person === 'number' ? person : undefined, updatedAt: parseInstant(item.update_time) }
}

export function readPerson(item: Record<string, any>): Person | undefined {
  if (typeof item.id !== 'number') return undefined
  const emails = (Array.isArray(item.emails) ? item.emails : Array.isArray(item.email) ? item.email : []).filter(isObject)
  const email = (emails.find((entry) => entry.primary === true) ?? emails[0])?.value
  return {
    id: item.id,
    email: typeof email === 'string' ? email : undefined,
    updatedAt: parseInstant(item.update_time),
    labelIds: Array.isArray(item.label_ids) ? item.label_ids : [],
    customFields: isObject(item.custom_fields) ? item.custom_fields : {},
  }
}

/** Whether the person's field holds one of the configured values (an option id, a set of them, or text). */
export function personFieldMatches(person: Person, field: { key: string, values: string[] }): boolean {
  const value = field.key === 'label_ids' ? person.labelIds : person.customFields[field.key]
  const held = (Array.isArray(value) ? value : [value]).map((entry) => (isObject(entry) && 'id' in entry ? entry.id : entry))
  return held.some((entry) => (typeof entry === 'string' || typeof entry === 'number') && field.values.includes(String(entry)))
}

function listUrl(options: PipedriveOptions, resource: string, query: Record<string, string>, cursor: string | undefined, limit = options.pageSize): string {
  const params = new URLSearchParams({ ...query, limit: String(limit), ...(cursor ? { cursor } : {}) })
  return `${options.baseUrl}/api/${PIPEDRIVE_API_VERSION}/${resource}?${params}`
}
