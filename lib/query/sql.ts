// A ListQuery as SQL over SQLite's JSON functions, for the table of lib/store/sqlite.ts
// (`entries`: slug, status, created_at, updated_at, data; `entry_search`: id, search). The
// semantics are memory.ts's, operator by operator (see there and values.ts).
//
// Safety: every value is a bound parameter. A JSON path is written into the SQL text only when
// each segment is a plain identifier (the form of schema field names, so expression indexes
// match); any other path is bound as a parameter, each segment quoted as a JSON string.
import { fold, prefixUpperBound } from './values.js'
import type { FieldRef, Filter, KeysetPosition, ListQuery, Scalar, SortKey, ValueKind } from '../../types/query.js'

/** Parameters collected in the order their `?` appear in the SQL text. */
export type Params = unknown[]

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

/** The typed key of a data path (each use of a bound path pushes it again). */
function dataKeySql (path: readonly string[], kind: ValueKind, params: Params): string {
  if (kind === 'date') return `${INSTANT_FUNCTION}(json_extract(data, ${pathSql(path, params)}))`
  const type = `json_type(data, ${pathSql(path, params)})`
  return typedSql(kind, type, `json_extract(data, ${pathSql(path, params)})`)
}

const SYSTEM_COLUMNS: Record<string, string> = {
  _slug: 'slug',
  _status: 'status',
  _created_at: 'created_at',
  _updated_at: 'updated_at'
}

function systemColumn (field: FieldRef): string {
  const column = SYSTEM_COLUMNS[field.name]
  if (column === undefined || !Object.hasOwn(SYSTEM_COLUMNS, field.name)) throw new Error(`unknown system field ${field.name}`)
  return column
}

/** The key expression of a (non-array) field, as sorts and scalar filters use it. */
export function keySql (field: FieldRef, params: Params): string {
  return field.system ? systemColumn(field) : dataKeySql(field.path, field.kind, params)
}

/**
 * The key expression of a literal data path as an expression index holds it, or null when the
 * path cannot be indexed. Identical to what keySql writes, so the planner can use the index.
 */
export function indexKeySql (path: readonly string[], kind: ValueKind): string | null {
  if (!isLiteralPath(path)) return null
  return dataKeySql(path, kind, [])
}

/**
 * A filter value as bound: booleans as 1/0; for the timestamp columns (ISO 8601 UTC text, whose
 * order is the order of the instants) a date is bound as the same text.
 */
function bindValue (field: FieldRef, value: Scalar): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0
  if (field.system && field.kind === 'date') return new Date(value as number).toISOString()
  return value
}

/**
 * The condition of one operator (not exists, ne, nin) on a key expression. `key` writes the
 * expression, pushing its own parameters, each time it is used.
 */
function comparison (filter: Filter, key: (params: Params) => string, params: Params): string {
  const { field, op } = filter
  switch (op) {
    case 'eq': {
      const k = key(params)
      params.push(bindValue(field, filter.value as Scalar))
      return `${k} = ?`
    }
    case 'contains': {
      const k = key(params)
      params.push(bindValue(field, filter.value as Scalar))
      return field.array ? `${k} = ?` : `instr(${k}, ?) > 0`
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const k = key(params)
      params.push(bindValue(field, filter.value as Scalar))
      return `${k} ${{ gt: '>', gte: '>=', lt: '<', lte: '<=' }[op]} ?`
    }
    case 'in':
    case 'nin': {
      const k = key(params)
      const values = filter.value as Scalar[]
      for (const v of values) params.push(bindValue(field, v))
      return `${k} IN (${values.map(() => '?').join(', ')})`
    }
    case 'starts': {
      // A range rather than substr/length: exact on code points, and an index can serve it.
      const prefix = filter.value as string
      const bound = prefixUpperBound(prefix)
      const low = key(params)
      params.push(prefix)
      if (bound === null) return `${low} >= ?`
      const high = key(params)
      params.push(bound)
      return `(${low} >= ? AND ${high} < ?)`
    }
    default:
      throw new Error(`unexpected operator ${op}`)
  }
}

/**
 * One filter as a SQL condition for a WHERE clause. Positive tests stay bare (`K = ?`) so the
 * planner can match an expression index; a missing value makes them NULL, which WHERE rejects.
 * Negations (ne, nin) must hold for a missing value, so they are written NULL-safe.
 */
export function filterSql (filter: Filter, params: Params): string {
  const { field, op } = filter
  if (op === 'exists') {
    if (field.system) return filter.value === true ? '1' : '0'
    const type = `COALESCE(json_type(data, ${pathSql(field.path, params)}), 'null')`
    return filter.value === true ? `${type} <> 'null'` : `${type} = 'null'`
  }
  const negated = op === 'ne' || op === 'nin'
  const positive: Filter = negated ? { ...filter, op: op === 'ne' ? 'eq' : 'in' } : filter
  if (field.array) {
    // Items of an array only: json_each also walks objects (text keys) and scalars (NULL key).
    const source = `json_each(data, ${pathSql(field.path, params)})`
    const item = typedSql(field.kind, 'e.type', 'e.value')
    const any = `EXISTS (SELECT 1 FROM ${source} AS e WHERE typeof(e.key) = 'integer' AND ${comparison(positive, () => `(${item})`, params)})`
    return negated ? `NOT ${any}` : any
  }
  if (op === 'ne') {
    const k = keySql(field, params)
    params.push(bindValue(field, filter.value as Scalar))
    return `${k} IS NOT ?`
  }
  const condition = comparison(positive, p => keySql(field, p), params)
  return negated ? `COALESCE(NOT (${condition}), 1)` : condition
}

/**
 * Every condition of a query but the bucket (environment, collection, locale): status, filters
 * and `_q`, each never NULL. The `_q` condition joins `entry_search` on `entries.id`.
 */
export function conditionsSql (query: Pick<ListQuery, 'status' | 'filters' | 'q'>, params: Params): string[] {
  const conditions: string[] = []
  if (query.status !== 'all') conditions.push(query.status === 'published' ? "status = 'published'" : "status = 'draft'")
  for (const filter of query.filters) conditions.push(filterSql(filter, params))
  if (query.q !== null) {
    params.push(fold(query.q))
    conditions.push('EXISTS (SELECT 1 FROM entry_search AS s WHERE s.id = entries.id AND instr(s.search, ?) > 0)')
  }
  return conditions
}

/** ORDER BY terms: the sort keys (no value first ascending, as SQLite orders NULL), then slug. */
export function orderSql (sort: readonly SortKey[], params: Params): string {
  const terms = sort.map(key => `${keySql(key.field, params)} ${key.direction === 'desc' ? 'DESC' : 'ASC'}`)
  terms.push('slug ASC')
  return terms.join(', ')
}

/** A condition with its own parameters. */
export interface Segment {
  sql: string
  params: Params
  /** The same for every position (the entries with, or without, a value for the first key): whether it matches anything may be kept. */
  fixed: boolean
}

/**
 * "After `position` in the order of `sort`, then slug" (keyset paging, contract §10), as one to
 * two conditions whose matches, each in the query's order, follow one another: read the first,
 * then the next while the page is not full. Each one bounds the first sort key by a range (or
 * IS NULL), so an index walk starts at the position rather than at the top, and a page deep in
 * a walk costs what the first did. No value sorts first ascending and last descending, so a
 * descending walk reaches the entries without a value last, in a segment of their own. Only
 * standard SQL operators: the same text serves every dialect.
 */
export function afterSegments (sort: readonly SortKey[], position: KeysetPosition): Segment[] {
  const first = sort[0]
  const segment = (build: (params: Params) => string, fixed = false): Segment => {
    const params: Params = []
    return { sql: build(params), params, fixed }
  }
  if (first === undefined) return [segment(params => afterFrom(0, sort, position, params))]
  const k = (params: Params): string => keySql(first.field, params)
  const rest = (params: Params): string => afterFrom(1, sort, position, params)
  const value = position.keys[0] ?? null
  if (value === null) {
    const tied = segment(params => `${k(params)} IS NULL AND ${rest(params)}`)
    return first.direction === 'asc' ? [tied, segment(params => `${k(params)} IS NOT NULL`, true)] : [tied]
  }
  const bound = bindKey(first.field, value)
  const [edge, beyond] = first.direction === 'asc' ? ['>=', '>'] : ['<=', '<']
  const ranged = segment(params => {
    const outer = k(params)
    params.push(bound)
    const inner = k(params)
    params.push(bound)
    return `${outer} ${edge} ? AND (${inner} ${beyond} ? OR ${rest(params)})`
  })
  return first.direction === 'asc' ? [ranged] : [ranged, segment(params => `${k(params)} IS NULL`, true)]
}

/** The OR form of "after the position" from sort key `i` on, for the keys a segment's range leaves tied. */
function afterFrom (i: number, sort: readonly SortKey[], position: KeysetPosition, params: Params): string {
  const key = sort[i]
  if (key === undefined) {
    params.push(position.slug)
    return 'slug > ?'
  }
  const value = position.keys[i] ?? null
  const k = (): string => keySql(key.field, params)
  if (key.direction === 'asc') {
    if (value === null) {
      const first = k()
      return `(${first} IS NOT NULL OR ${afterFrom(i + 1, sort, position, params)})`
    }
    const low = k()
    params.push(bindKey(key.field, value))
    const high = k()
    params.push(bindKey(key.field, value))
    return `(${low} >= ? AND (${high} > ? OR ${afterFrom(i + 1, sort, position, params)}))`
  }
  if (value === null) {
    const first = k()
    return `(${first} IS NULL AND ${afterFrom(i + 1, sort, position, params)})`
  }
  const below = k()
  params.push(bindKey(key.field, value))
  const missing = k()
  const equal = k()
  params.push(bindKey(key.field, value))
  return `(${below} < ? OR ${missing} IS NULL OR (${equal} = ? AND ${afterFrom(i + 1, sort, position, params)}))`
}

/** A position's key as bound: the timestamp columns hold ISO text, whose order is the instants'. */
function bindKey (field: FieldRef, value: number | string): unknown {
  return field.system && field.kind === 'date' ? new Date(value as number).toISOString() : value
}
