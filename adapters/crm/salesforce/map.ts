/**
 * Pure: the SOQL the poller sends and the query pages it reads. String literals are single-quoted with `\` escapes (SOQL's own: \' \" \\ \n \r \t
 * \b \f); datetime literals are unquoted ISO 8601 in UTC (`2026-03-02T10:45:00Z`), rounded down to the second, since
 * the documented forms carry no fraction. Dates Salesforce returns look like `2026-03-02T10:45:00.000+0000`.
 */
import { isObject } from '../../shared/helpers.ts'
import type { SalesforceOptions } from './index.ts'
import { SALESFORCE_API_VERSION } from './version.ts'

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\'': '\\\'', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' }

/** A SOQL string literal. */
export function soqlString(value: string): string {
  return `'${value.replace(/[\\'"\n\r\t\b\f]/g, (character) => ESCAPES[character]!)}'`
}

/** A SOQL datetime literal, UTC, whole seconds (rounded down: the window only grows). */
export function soqlDateTime(instant: Date): string {
  return `${instant.toISOString().slice(0, 19)}Z`
}

/** Leads in a qualified status with an email, modified since the window opened, oldest first. */
export function leadQuery(options: Pick<SalesforceOptions, 'statuses' | 'modifiedField'>, since: Date): string {
  const field = options.modifiedField
  return `SELECT Id, Email, Status, ${field} FROM Lead`
    + ` WHERE Status IN (${options.statuses.map(soqlString).join(', ')}) AND Email != null AND ${field} >= ${soqlDateTime(since)}`
    + ` ORDER BY ${field} ASC, Id ASC`
}

/** The query resource under an instance (or baseUrl), SOQL URL-encoded. */
export function queryUrl(base: string, soql: string): string {
  return `${base}/services/data/${SALESFORCE_API_VERSION}/query?q=${encodeURIComponent(soql)}`
}

export interface QueryPage {
  records: Record<string, any>[]
  /** The next page's path, while `done` is false. */
  nextRecordsUrl?: string
}

/** `{ totalSize, done, nextRecordsUrl?, records }`; undefined if not that shape. */
export function readQueryPage(json: unknown): QueryPage | undefined {
  if (!isObject(json) || !Array.isArray(json.records) || typeof json.done !== 'boolean') return undefined
  const records = json.records.filter(isObject)
  return json.done === false && typeof json.nextRecordsUrl === 'string' && json.nextRecordsUrl.startsWith('/') ? { records, nextRecordsUrl: json.nextRecordsUrl } : { records }
}
