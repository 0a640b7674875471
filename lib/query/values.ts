// The value semantics of the query engine, shared by both backends so they agree exactly:
// how a stored JSON value is read at a dotted path, how it is typed for a field's kind, how
// dates become instants, how strings are ordered and how `_q` folds case.
//
//   - A path descends own properties of plain objects only: never into arrays, never through
//     a prototype. SQLite's JSON paths behave the same way (`$.a.0` on an array is NULL).
//   - A value is typed by the field's kind: a number field sees only JSON numbers, a boolean
//     field only JSON booleans (as 1 and 0), a string field only JSON strings, a date field only
//     strings that parse as an ISO 8601 date or date-time (as epoch milliseconds). Anything else
//     (missing, null, another type) is "no value": it never matches a comparison, sorts before
//     every value ascending and after every value descending, and matches `ne` and `nin`.
//   - Strings compare by Unicode code point, case-sensitively (SQLite's BINARY collation on UTF-8).
import type { ValueKind } from '../../types/query.js'

/** A typed value: numbers for number, boolean (1/0) and date (epoch ms) kinds; strings for string. */
export type Key = number | string | null

const hasOwn = Object.hasOwn

/** The raw value at a path, or undefined when any segment is missing or not a plain object. */
export function valueAtPath (data: unknown, path: readonly string[]): unknown {
  let current = data
  for (let i = 0; i < path.length; i++) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined
    const segment = path[i] as string
    if (!hasOwn(current, segment)) return undefined
    current = (current as Record<string, unknown>)[segment]
  }
  return current
}

/** A raw JSON value typed for a kind, or null when it has no value of that kind. */
export function typedKey (raw: unknown, kind: ValueKind): Key {
  switch (kind) {
    case 'number': return typeof raw === 'number' ? raw : null
    case 'string': return typeof raw === 'string' ? raw : null
    case 'boolean': return typeof raw === 'boolean' ? (raw ? 1 : 0) : null
    case 'date': return typeof raw === 'string' ? instant(raw) : null
  }
}

// ---- dates --------------------------------------------------------------------------------

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?)?$/

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil (year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

function daysInMonth (year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/**
 * An ISO 8601 date (`YYYY-MM-DD`, midnight UTC) or date-time (`YYYY-MM-DDTHH:MM[:SS[.fff…]]`
 * with `Z` or `±HH:MM`, UTC when absent) as epoch milliseconds, or null when the text is not one.
 * Fractions below a millisecond are dropped. Strict: no out-of-range fields, no leap seconds.
 */
export function instant (text: string): number | null {
  if (text.length < 10 || text.length > 64) return null
  const m = DATE_RE.exec(text)
  if (m === null) return null
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null
  let ms = daysFromCivil(year, month, day) * 86_400_000
  if (m[4] !== undefined) {
    const hour = Number(m[4])
    const minute = Number(m[5])
    const second = m[6] === undefined ? 0 : Number(m[6])
    if (hour > 23 || minute > 59 || second > 59) return null
    const fraction = m[7] === undefined ? 0 : Number((m[7] + '00').slice(0, 3))
    ms += ((hour * 60 + minute) * 60 + second) * 1000 + fraction
    if (m[9] !== undefined) {
      const offsetHours = Number(m[10])
      const offsetMinutes = Number(m[11])
      if (offsetHours > 23 || offsetMinutes > 59) return null
      const offset = (offsetHours * 60 + offsetMinutes) * 60_000
      ms += m[9] === '-' ? offset : -offset
    }
  }
  return ms
}

// ---- strings ------------------------------------------------------------------------------

/**
 * Compares two strings by Unicode code point, the order of SQLite's BINARY collation on UTF-8.
 * (Plain `<` compares UTF-16 code units, which puts U+E000–U+FFFF after astral characters.)
 */
export function compareText (a: string, b: string): number {
  if (a === b) return 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x !== y) {
      if (x >= 0xD800 && y >= 0xD800) {
        // Surrogates (astral code points) sort after U+E000–U+FFFF.
        x = x >= 0xE000 ? x - 0x800 : x + 0x2000
        y = y >= 0xE000 ? y - 0x800 : y + 0x2000
      }
      return x < y ? -1 : 1
    }
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0
}

/** Compares two keys of one kind: no value first, then numbers numerically, strings by code point. */
export function compareKeys (a: Key, b: Key): number {
  if (a === null) return b === null ? 0 : -1
  if (b === null) return 1
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === 'string' && typeof b === 'string') return compareText(a, b)
  // One kind never yields both; numbers before strings, as in SQLite, for completeness.
  return typeof a === 'number' ? -1 : 1
}

/**
 * The smallest string greater than every string that starts with `prefix`, or null when there
 * is none. `starts` becomes the range `prefix <= value < bound`, which an index can serve and
 * which does not depend on how SQLite counts characters in text holding U+0000.
 */
export function prefixUpperBound (prefix: string): string | null {
  const codePoints = Array.from(prefix)
  while (codePoints.length > 0) {
    const last = (codePoints.pop() as string).codePointAt(0) as number
    if (last < 0x10FFFF) {
      const next = last + 1 === 0xD800 ? 0xE000 : last + 1
      return codePoints.join('') + String.fromCodePoint(next)
    }
  }
  return null
}

/**
 * Case folding for `_q`: compatibility normalization (NFKC: ligatures, full-width forms,
 * composed and decomposed accents alike), then full Unicode case mapping both ways (so `ß`
 * matches `SS`), with the context-dependent final sigma folded to σ.
 */
export function fold (text: string): string {
  // Plain ASCII, the common case, only needs lowercasing.
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7F]*$/.test(text)) return text.toLowerCase()
  return text.normalize('NFKC').toUpperCase().toLowerCase().replace(/ς/g, 'σ')
}

/** The separator between string values in a search text; `_q` may not contain it. */
export const SEARCH_SEPARATOR = '\u0000'

/**
 * Every string value of an entry's data (at any depth, in objects and arrays; keys left out),
 * folded and joined by U+0000. `_q` matches when this text contains the folded query.
 */
export function searchText (data: unknown): string {
  const parts: string[] = []
  collectStrings(data, parts)
  return parts.join(SEARCH_SEPARATOR)
}

function collectStrings (value: unknown, out: string[]): void {
  if (typeof value === 'string') {
    out.push(fold(value))
  } else if (Array.isArray(value)) {
    for (const item of value) collectStrings(item, out)
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) collectStrings((value as Record<string, unknown>)[key], out)
  }
}

// ---- immutability -----------------------------------------------------------------------------

/** Freezes a JSON value in place, at every depth. Stores hand out frozen data. */
export function deepFreeze<T> (value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    if (Array.isArray(value)) {
      for (const item of value) deepFreeze(item)
    } else {
      for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
    }
  }
  return value
}
