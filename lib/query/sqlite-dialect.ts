// The SQLite side of lib/query/sql.ts: SQLite's JSON functions over `entries.data` (JSON text),
// `?` placeholders, NULL sorting first ascending (SQLite's own order), `_q` through `entry_search`.
import type { ValueKind } from '../../types/query.js'
import type { Params, SqlDialect } from './sql.js'

/** The SQLite function registered by the store: values.ts `instant` over a SQL value. */
export const INSTANT_FUNCTION = 'lectern_instant'

const IDENTIFIER_SEGMENT = /^[A-Za-z_][A-Za-z0-9_-]*$/

/** Whether a data path can be written into SQL text (and so be indexed). */
export function isLiteralPath (path: readonly string[]): boolean {
  return path.length > 0 && path.every(segment => IDENTIFIER_SEGMENT.test(segment))
}

/** A SQLite JSON path: `$.a.b`, with segments that are not identifiers quoted (`$."a b"`). */
export function jsonPath (path: readonly string[]): string {
  return '$' + path.map(s => '.' + (IDENTIFIER_SEGMENT.test(s) ? s : JSON.stringify(s))).join('')
}

/** The path as SQL: a literal for identifier paths, else a bound parameter. */
function pathSql (path: readonly string[], params: Params): string {
  if (isLiteralPath(path)) return `'${jsonPath(path)}'`
  params.push(jsonPath(path))
  return '?'
}

/** The typed key of a JSON value given its json_type and SQL value expressions (values.ts `typedKey`). */
function typedSql (kind: ValueKind, type: string, value: string): string {
  switch (kind) {
    // CAST: a JSON integer beyond 2^53 must compare as the double JavaScript reads.
    case 'number': return `CASE WHEN ${type} IN ('integer', 'real') THEN CAST(${value} AS REAL) END`
    case 'string': return `CASE WHEN ${type} = 'text' THEN ${value} END`
    case 'boolean': return `CASE ${type} WHEN 'true' THEN 1 WHEN 'false' THEN 0 END`
    // The function returns NULL for anything but a string holding a date.
    case 'date': return `${INSTANT_FUNCTION}(${value})`
  }
}

export const sqliteDialect: SqlDialect = {
  isLiteralPath,
  dataKey (path, kind, params) {
    if (kind === 'date') return `${INSTANT_FUNCTION}(json_extract(data, ${pathSql(path, params)}))`
    const type = `json_type(data, ${pathSql(path, params)})`
    return typedSql(kind, type, `json_extract(data, ${pathSql(path, params)})`)
  },
  anyItem (path, kind, params, condition) {
    // Items of an array only: json_each also walks objects (text keys) and scalars (NULL key).
    const source = `json_each(data, ${pathSql(path, params)})`
    return `EXISTS (SELECT 1 FROM ${source} AS e WHERE typeof(e.key) = 'integer' AND ${condition(`(${typedSql(kind, 'e.type', 'e.value')})`)})`
  },
  present (path, params) {
    return `COALESCE(json_type(data, ${pathSql(path, params)}), 'null') <> 'null'`
  },
  bindText: text => text,
  contains: key => `instr(${key}, ?) > 0`,
  search: 'EXISTS (SELECT 1 FROM entry_search AS s WHERE s.id = entries.id AND instr(s.search, ?) > 0)',
  distinct: 'IS NOT',
  truth: ['1', '0'],
  // SQLite puts NULL first ascending and last descending already: what values.ts says.
  nulls: () => ''
}
