import { DriverException } from '@mikro-orm/core'
import { DatabaseTimeoutError } from './timeouts.ts'

/**
 * Database errors carry personal data: knex puts the whole statement with its values in front of the message
 * (`insert into … values ('ann@example.com', …) - duplicate key …`), node-postgres adds `detail`
 * (`Key (email)=(ann@example.com) already exists.`), `where` and `internalQuery`, and MikroORM copies all of it onto
 * its exceptions. A log line or an error tracker is a copy an erasure cannot reach, so what leaves the process keeps
 * the error class, the SQLSTATE code, the constraint, table and column names, and a generic message: enough to
 * find the cause, nothing of the row.
 */
export class RedactedDatabaseError extends Error {
  declare readonly code?: string
  declare readonly constraint?: string
  declare readonly table?: string
  declare readonly column?: string

  constructor(original: Error & Partial<Record<'code' | 'constraint' | 'table' | 'column', unknown>>) {
    const code = typeof original.code === 'string' ? original.code : undefined
    const names = (['table', 'column', 'constraint'] as const)
      .flatMap((field) => (typeof original[field] === 'string' ? [`${field} ${original[field] as string}`] : []))
    super(`${describe(original, code)}${names.length ? ` on ${names.join(', ')}` : ''}; statement, parameters and detail withheld`)
    // The class says what failed (node-postgres names every DatabaseError plain 'error').
    this.name = original.constructor.name || original.name
    const kept: Record<string, string> = {}
    if (code) kept.code = code
    for (const field of ['constraint', 'table', 'column'] as const) {
      if (typeof original[field] === 'string') kept[field] = original[field] as string
    }
    Object.assign(this, kept)
    // The frames say where it happened; the original first lines held the statement.
    const frames = (original.stack ?? '').split('\n').filter((line) => line.trim().startsWith('at '))
    this.stack = [`${this.name}: ${this.message}`, ...frames].join('\n')
  }
}

/**
 * A server error (a SQLSTATE code) is named by its code only: its message can quote a value (`invalid input syntax
 * for type uuid: "…"`). Anything else (a connection failure) keeps the driver's message, without the statement.
 */
function describe(original: Error, code: string | undefined): string {
  if (original instanceof DatabaseTimeoutError || code === TIMEOUT_CODE) return 'the database did not answer in time; the connection was closed'
  if (code && SQLSTATE.test(code)) return `PostgreSQL error ${code}${CONDITIONS[code] ? ` (${CONDITIONS[code]})` : ''}`
  return `database error: ${withoutStatement(original.message)}`
}

const SQLSTATE = /^[0-9A-Z]{5}$/
const TIMEOUT_CODE: string = new DatabaseTimeoutError('').code

/** SQLSTATE codes dcgate meets, by condition name (PostgreSQL's appendix A). */
const CONDITIONS: Readonly<Record<string, string>> = {
  '22001': 'string_data_right_truncation',
  '22021': 'character_not_in_repertoire',
  '22P02': 'invalid_text_representation',
  '22P05': 'untranslatable_character',
  '23502': 'not_null_violation',
  '23503': 'foreign_key_violation',
  '23505': 'unique_violation',
  '23514': 'check_violation',
  '25P02': 'in_failed_sql_transaction',
  '40001': 'serialization_failure',
  '40P01': 'deadlock_detected',
  '53300': 'too_many_connections',
  '57014': 'query_canceled',
  '57P01': 'admin_shutdown',
}

/** An error from the database path: MikroORM's exceptions, node-postgres's DatabaseError, our query guard. */
function isDatabaseError(error: Error): boolean {
  if (error instanceof DriverException || error instanceof DatabaseTimeoutError || error instanceof RedactedDatabaseError) return true
  const fields = error as Error & Record<string, unknown>
  return typeof fields.severity === 'string' && typeof fields.code === 'string' && ('routine' in fields || 'detail' in fields)
}

/**
 * knex writes `<statement with values> - <driver message>`; the driver's own message (`Connection terminated
 * unexpectedly`, `timeout exceeded when trying to connect`) is what is kept.
 */
const KNEX_PREFIX = /^\s*\(?\s*(?:select|insert|update|delete|with|begin|commit|rollback|set|create|alter|drop|truncate|lock|copy|values|explain)\b[\s\S]* - /i

/** The same statement quoted inside a longer text (`release: … failed: insert into … - duplicate key …`). */
const QUOTED_STATEMENT = /\b(?:insert\s+into|delete\s+from|select\b[\s\S]*?\bfrom|update\s+\S+\s+set|with\s+\S+\s+as\s*\()[\s\S]* - /i

/** Text without a statement knex put in front of a driver message. */
export function withoutStatement(text: string): string {
  if (KNEX_PREFIX.test(text)) return text.slice(text.lastIndexOf(' - ') + 3)
  return text.replace(QUOTED_STATEMENT, '[statement withheld] - ')
}

/**
 * What may be logged or handed to the `error` hook in place of `value`: database errors become a
 * RedactedDatabaseError, other errors lose a statement knex prefixed to their message and have their `cause`
 * chain treated the same way; anything else passes unchanged.
 */
export function toLoggable(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error) || depth > 8) return value
  if (isDatabaseError(value)) return value instanceof RedactedDatabaseError ? value : new RedactedDatabaseError(value)
  const message = withoutStatement(value.message)
  const cause = toLoggable(value.cause, depth + 1)
  if (message === value.message && cause === value.cause) return value
  const copy = Object.assign(Object.create(Object.getPrototypeOf(value) as object) as Error, value)
  Object.defineProperty(copy, 'message', { value: message, writable: true, configurable: true })
  if (value.cause !== undefined) Object.defineProperty(copy, 'cause', { value: cause, writable: true, configurable: true })
  const frames = (value.stack ?? '').split('\n').filter((line) => line.trim().startsWith('at '))
  Object.defineProperty(copy, 'stack', { value: [`${value.name}: ${message}`, ...frames].join('\n'), writable: true, configurable: true })
  return copy
}
