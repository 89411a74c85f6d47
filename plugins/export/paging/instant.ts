/**
 * Instants with a tiebreak, written as ISO 8601 / RFC 3339 timestamps (docs/api/export.md, "Paging").
 *
 * Every exported record has a position: its paging time (microseconds, as PostgreSQL stores it) plus its id, a
 * UUID read as a 128-bit number, placed in the 7th to 45th digits of the seconds' fraction. As a real number the
 * position lies in [time, time + 1 µs), so positions order exactly like (time, id), and `since` / `until` compare
 * with them as plain instants: a timestamp with up to 6 fraction digits means "tiebreak 0", and `next_since` is the
 * position just after the last record returned, still a valid timestamp (RFC 3339 allows any number of digits).
 */

/** Microseconds since 1970-01-01T00:00:00Z and a tiebreak 0 ≤ tie ≤ MAX_TIE (the UUID's numeric value). */
export interface Position {
  micros: bigint
  tie: bigint
}

const TIE_DIGITS = 39
/** The largest UUID, ffffffff-ffff-ffff-ffff-ffffffffffff. */
export const MAX_TIE = (1n << 128n) - 1n
const MAX_LENGTH = 100

const FORMAT = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/

/**
 * Reads an ISO 8601 date (`2026-01-31`, midnight UTC) or date-time with an optional offset (`Z`, `+02:00`, `+0200`,
 * `-05`; none means UTC), minutes, seconds and any number of fraction digits. Returns null when it is not one.
 * Digits past the 45th round the position up (a `since` or `until` between two positions means the later one).
 */
export function parseInstant(text: string): Position | null {
  if (text.length > MAX_LENGTH) return null
  const m = FORMAT.exec(text)
  if (!m) return null
  const [year, month, day, hour = 0, minute = 0, second = 0] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((part) => (part === undefined ? undefined : Number(part))) as number[]
  if (year! < 1 || month! < 1 || month! > 12 || day! < 1 || day! > daysInMonth(year!, month!)) return null
  if (hour > 23 || minute > 59 || second > 59) return null
  const offsetMinutes = parseOffset(m[8])
  if (offsetMinutes === null) return null
  const date = new Date(0)
  date.setUTCFullYear(year!, month! - 1, day!)
  const seconds = BigInt(date.getTime() / 1000) + BigInt(hour * 3600 + minute * 60 + second - offsetMinutes * 60)
  const fraction = (m[7] ?? '').padEnd(6 + TIE_DIGITS, '0')
  let micros = seconds * 1_000_000n + BigInt(fraction.slice(0, 6))
  let tie = BigInt(fraction.slice(6, 6 + TIE_DIGITS))
  if (/[1-9]/.test(fraction.slice(6 + TIE_DIGITS))) tie += 1n
  // No UUID is that large (or the rounding carried): the next position at or after it is the next microsecond's first.
  if (tie > MAX_TIE) {
    micros += 1n
    tie = 0n
  }
  return { micros, tie }
}

/** `2026-01-31T12:00:00.123456Z`, plus the tiebreak's digits (trailing zeros dropped) when it is not 0. */
export function formatInstant(position: Position): string {
  const ms = floorDiv(position.micros, 1000n)
  const base = new Date(Number(ms)).toISOString().slice(0, 19)
  const micros = String(position.micros - floorDiv(position.micros, 1_000_000n) * 1_000_000n).padStart(6, '0')
  if (position.tie === 0n) return `${base}.${micros}Z`
  return `${base}.${micros}${String(position.tie).padStart(TIE_DIGITS, '0').replace(/0+$/, '')}Z`
}

/**
 * Where the next page starts: the position after `last` with the fewest digits that is still at or before `next`
 * (the first record not returned). With no record between them, it includes exactly what `last + 1` would, and it
 * is a plain microsecond timestamp unless the two records share their microsecond; then it carries only the
 * tiebreak digits needed to tell them apart.
 */
export function between(last: Position, next: Position): Position {
  if (next.micros > last.micros) return { micros: last.micros + 1n, tie: 0n }
  for (let unit = 10n ** BigInt(TIE_DIGITS - 1); ; unit /= 10n) {
    const tie = (last.tie / unit + 1n) * unit
    if (tie <= next.tie) return { micros: last.micros, tie }
  }
}

/** A record's position from its paging time (as formatted by SQL_TIME) and its UUID. */
export function positionOf(time: string, uuid: string): Position {
  const position = parseInstant(time)
  if (!position) throw new TypeError(`not a timestamp: ${time}`)
  return { micros: position.micros, tie: BigInt(`0x${uuid.replaceAll('-', '')}`) }
}

/** The UUID whose numeric value is the tiebreak (PostgreSQL compares UUIDs as 128-bit big-endian numbers). */
export function tieToUuid(tie: bigint): string {
  const hex = tie.toString(16).padStart(32, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** The microsecond as PostgreSQL reads it exactly (timestamptz input). */
export function toSqlTime(position: Position): string {
  return formatInstant({ micros: position.micros, tie: 0n })
}

/** SQL that prints a timestamptz column as `2026-01-31T12:00:00.123456Z`: every record's time, to the microsecond. */
export const sqlTime = (column: string): string => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

function parseOffset(text: string | undefined): number | null {
  if (text === undefined || text === 'Z' || text === 'z') return 0
  const digits = text.slice(1).replace(':', '')
  const hours = Number(digits.slice(0, 2))
  const minutes = digits.length === 4 ? Number(digits.slice(2)) : 0
  if (hours > 23 || minutes > 59) return null
  return (text[0] === '-' ? -1 : 1) * (hours * 60 + minutes)
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q
}

