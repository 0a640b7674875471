// The PostgreSQL side of lib/query/sql.ts, over the `entries` table of lib/store/postgres.ts:
// `data` is JSONB (what conditions and expression indexes read), `doc` the JSON text as written
// (what reads return), `search` the folded search text.
//
// PostgreSQL's text cannot hold U+0000, and JSONB refuses `\u0000` and lone surrogates. So the
// JSONB copy (and the search text, whose separator is U+0000) holds every string `pgText`-encoded:
// U+0000 as U+0001 U+0001, U+0001 as U+0001 U+0002, a lone surrogate as U+FFFD (what SQLite
// stores for one). The code keeps the order of code points, equality and prefixes, so `=`, ranges
// and `starts` compare encoded strings exactly as memory.ts compares the originals; only a
// substring match may start inside a pair, which `lectern_contains` (postgres-schema.ts) rejects.
// Strings compare with COLLATE "C": byte order of UTF-8, which is code point order.
import type { ValueKind } from '../../types/query.js'
import { INSTANT_FUNCTION, type Params, type SqlDialect } from './sql.js'

const IDENTIFIER_SEGMENT = /^[A-Za-z_][A-Za-z0-9_-]*$/

/** Whether a data path is written into SQL text: identifiers only (never a number, which `#>` would take as an array index). */
function isLiteralPath (path: readonly string[]): boolean {
  return path.length > 0 && path.every(segment => IDENTIFIER_SEGMENT.test(segment))
}

// eslint-disable-next-line no-control-regex
const NEEDS_ENCODING = /[\u0000\u0001\uD800-\uDFFF]/

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g
// eslint-disable-next-line no-control-regex
const LOW_CONTROLS = /[\u0000\u0001]/g

/** A string as the JSONB copy holds it (see above); most strings are returned as they are. */
export function pgText (text: string): string {
  if (!NEEDS_ENCODING.test(text)) return text
  return text.replace(LONE_SURROGATE, '\uFFFD').replace(LOW_CONTROLS, (c: string) => c === '\u0000' ? '\u0001\u0001' : '\u0001\u0002')
}

// JSON.stringify escapes U+0000, U+0001 and lone surrogates; any other text JSONB takes as it is.
const ESCAPED = /\\u000[01]|\\ud[89a-f]/i

/** The JSONB copy's text of data whose JSON text is `json`: `json` itself unless a string needs encoding. */
export function jsonbText (data: unknown, json: string): string {
  if (!ESCAPED.test(json)) return json
  return JSON.stringify(encodeStrings(data))
}

function encodeStrings (value: unknown): unknown {
  if (typeof value === 'string') return pgText(value)
  if (Array.isArray(value)) return value.map(encodeStrings)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value)) out[pgText(key)] = encodeStrings((value as Record<string, unknown>)[key])
    return out
  }
  return value
}

/** SQL text with `?` placeholders (lib/query/sql.ts) numbered `$1`, `$2`… for PostgreSQL. */
export function numbered (sql: string, params: Params): string {
  let n = 0
  // The builder writes no `?` but placeholders: values are bound, literal paths are identifiers.
  const text = sql.replace(/\?/g, () => `$${++n}`)
  if (n !== params.length) throw new Error(`${n} placeholders for ${params.length} parameters`)
  return text
}

/** The JSONB value at a path: `#>` for an identifier path, else `lectern_path` (objects only), the path bound. */
function valueAt (path: readonly string[], params: Params): string {
  if (isLiteralPath(path)) return `(data #> '{${path.join(',')}}')`
  params.push(path.map(pgText))
  return 'lectern_path(data, ?::text[])'
}

/** values.ts `typedKey` of a JSONB value expression (written again, with its parameters, at each use). */
function typed (kind: ValueKind, value: (params: Params) => string, params: Params): string {
  const type = `jsonb_typeof(${value(params)})`
  switch (kind) {
    // A JSONB number is the decimal text JSON.stringify wrote: as float8, the double JavaScript read.
    case 'number': return `CASE WHEN ${type} = 'number' THEN (${value(params)})::float8 END`
    case 'string': return `CASE WHEN ${type} = 'string' THEN (${value(params)} #>> '{}') COLLATE "C" END`
    case 'boolean': return `CASE WHEN ${type} = 'boolean' THEN (${value(params)})::boolean::int END`
    case 'date': return `${INSTANT_FUNCTION}(CASE WHEN ${type} = 'string' THEN ${value(params)} #>> '{}' END)`
  }
}

export const postgresDialect: SqlDialect = {
  isLiteralPath,
  dataKey: (path, kind, params) => typed(kind, p => valueAt(path, p), params),
  anyItem (path, kind, params, condition) {
    const first = valueAt(path, params)
    const again = valueAt(path, params)
    const source = `jsonb_array_elements(CASE WHEN jsonb_typeof(${first}) = 'array' THEN ${again} END) AS e(value)`
    return `EXISTS (SELECT 1 FROM ${source} WHERE ${condition(`(${typed(kind, () => 'e.value', params)})`)})`
  },
  present: (path, params) => `COALESCE(jsonb_typeof(${valueAt(path, params)}), 'null') <> 'null'`,
  bindText: pgText,
  contains: key => `lectern_contains(${key}, ?)`,
  search: 'lectern_contains(search, ?)',
  distinct: 'IS DISTINCT FROM',
  truth: ['TRUE', 'FALSE'],
  nulls: direction => direction === 'asc' ? ' NULLS FIRST' : ' NULLS LAST'
}
