// A ListQuery as SQL: one builder, two dialects (sqlite-dialect.ts for lib/store/sqlite.ts,
// postgres-dialect.ts for lib/store/postgres.ts), over a table `entries` with the columns slug,
// status, created_at, updated_at (ISO text) and the entry's data. The semantics are memory.ts's,
// operator by operator (see there and values.ts); a dialect only says how SQL reads a JSON value.
//
// Safety: every value is a bound parameter, written `?` (the PostgreSQL store numbers them,
// postgres-dialect.ts `numbered`). A JSON path is written into the SQL text only when each
// segment is a plain identifier (the form of schema field names, so expression indexes match);
// any other path is bound as a parameter.
import { fold, prefixUpperBound } from './values.js'
import { INSTANT_FUNCTION, isLiteralPath, jsonPath, sqliteDialect } from './sqlite-dialect.js'
import type { FieldRef, Filter, KeysetPosition, ListQuery, Scalar, SortKey, ValueKind } from '../../types/query.js'

/** Parameters collected in the order their `?` appear in the SQL text. */
export type Params = unknown[]

export { INSTANT_FUNCTION, isLiteralPath, jsonPath }

/** How one database reads JSON data: what differs between SQLite and PostgreSQL, nothing else. */
export interface SqlDialect {
  /** Whether a data path is written into SQL text (so an expression index can match it). */
  isLiteralPath: (path: readonly string[]) => boolean
  /** The typed key (values.ts `typedKey`) of the data at a path; pushes the path when bound. */
  dataKey: (path: readonly string[], kind: ValueKind, params: Params) => string
  /** "Some item of the array at `path` satisfies `condition`", given each item's typed key. */
  anyItem: (path: readonly string[], kind: ValueKind, params: Params, condition: (item: string) => string) => string
  /** "The path holds something other than null" (`exists`). */
  present: (path: readonly string[], params: Params) => string
  /** A string value (of a filter or a position) as bound, compared with the data's strings. */
  bindText: (text: string) => unknown
  /** "`key` contains the bound text" (one `?`). */
  contains: (key: string) => string
  /** "The entry's folded search text contains the bound text" (one `?`). */
  search: string
  /** The NULL-safe "differs from" operator. */
  distinct: string
  /** The always-true and always-false conditions. */
  truth: readonly [string, string]
  /** What ORDER BY adds so no value sorts first ascending and last descending. */
  nulls: (direction: 'asc' | 'desc') => string
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

/** A condition with its own parameters. */
export interface Segment {
  sql: string
  params: Params
  /** The same for every position (the entries with, or without, a value for the first key): whether it matches anything may be kept. */
  fixed: boolean
}

/** The builder of one dialect. */
export interface SqlBuilder {
  /** The key expression of a (non-array) field, as sorts and scalar filters use it. */
  keySql: (field: FieldRef, params: Params) => string
  /**
   * The key expression of a literal data path as an expression index holds it, or null when the
   * path cannot be indexed. Identical to what keySql writes, so the planner can use the index.
   */
  indexKeySql: (path: readonly string[], kind: ValueKind) => string | null
  /** One filter as a condition for a WHERE clause. */
  filterSql: (filter: Filter, params: Params) => string
  /** Every condition of a query but the bucket (environment, collection, locale): status, filters and `_q`, each never NULL. */
  conditionsSql: (query: Pick<ListQuery, 'status' | 'filters' | 'q'>, params: Params) => string[]
  /** ORDER BY terms: the sort keys (no value first ascending), then slug. */
  orderSql: (sort: readonly SortKey[], params: Params) => string
  /** "After `position` in the order of `sort`, then slug" (keyset paging): see below. */
  afterSegments: (sort: readonly SortKey[], position: KeysetPosition) => Segment[]
  /** A value compared with a key of `field`, as bound (booleans 1/0, timestamps as ISO text, strings as the dialect binds them). */
  bindKey: (field: FieldRef, value: Scalar) => unknown
}

export function sqlBuilder (dialect: SqlDialect): SqlBuilder {
  const keySql = (field: FieldRef, params: Params): string =>
    field.system ? systemColumn(field) : dialect.dataKey(field.path, field.kind, params)

  /** For the timestamp columns (ISO 8601 UTC text, whose order is the order of the instants) a date is bound as the same text. */
  const bindKey = (field: FieldRef, value: Scalar): unknown => {
    if (typeof value === 'boolean') return value ? 1 : 0
    if (field.system && field.kind === 'date') return new Date(value as number).toISOString()
    return typeof value === 'string' ? dialect.bindText(value) : value
  }

  /**
   * The condition of one operator (not exists, ne, nin) on a key expression. `key` writes the
   * expression, pushing its own parameters, each time it is used.
   */
  const comparison = (filter: Filter, key: (params: Params) => string, params: Params): string => {
    const { field, op } = filter
    switch (op) {
      case 'eq':
      case 'contains': {
        const k = key(params)
        params.push(bindKey(field, filter.value as Scalar))
        return op === 'contains' && !field.array ? dialect.contains(k) : `${k} = ?`
      }
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        const k = key(params)
        params.push(bindKey(field, filter.value as Scalar))
        return `${k} ${{ gt: '>', gte: '>=', lt: '<', lte: '<=' }[op]} ?`
      }
      case 'in':
      case 'nin': {
        const k = key(params)
        const values = filter.value as Scalar[]
        for (const v of values) params.push(bindKey(field, v))
        return `${k} IN (${values.map(() => '?').join(', ')})`
      }
      case 'starts': {
        // A range rather than substr/length: exact on code points, and an index can serve it.
        const prefix = filter.value as string
        const bound = prefixUpperBound(prefix)
        const low = key(params)
        params.push(dialect.bindText(prefix))
        if (bound === null) return `${low} >= ?`
        const high = key(params)
        params.push(dialect.bindText(bound))
        return `(${low} >= ? AND ${high} < ?)`
      }
      default:
        throw new Error(`unexpected operator ${op}`)
    }
  }

  /**
   * Positive tests stay bare (`K = ?`) so the planner can match an expression index; a missing
   * value makes them NULL, which WHERE rejects. Negations (ne, nin) must hold for a missing
   * value, so they are written NULL-safe.
   */
  const filterSql = (filter: Filter, params: Params): string => {
    const { field, op } = filter
    const [yes, no] = dialect.truth
    if (op === 'exists') {
      if (field.system) return filter.value === true ? yes : no
      const present = dialect.present(field.path, params)
      return filter.value === true ? present : `NOT (${present})`
    }
    const negated = op === 'ne' || op === 'nin'
    const positive: Filter = negated ? { ...filter, op: op === 'ne' ? 'eq' : 'in' } : filter
    if (field.array) {
      const any = dialect.anyItem(field.path, field.kind, params, item => comparison(positive, () => item, params))
      return negated ? `NOT ${any}` : any
    }
    if (op === 'ne') {
      const k = keySql(field, params)
      params.push(bindKey(field, filter.value as Scalar))
      return `${k} ${dialect.distinct} ?`
    }
    const condition = comparison(positive, p => keySql(field, p), params)
    return negated ? `COALESCE(NOT (${condition}), ${yes})` : condition
  }

  const conditionsSql = (query: Pick<ListQuery, 'status' | 'filters' | 'q'>, params: Params): string[] => {
    const conditions: string[] = []
    if (query.status !== 'all') conditions.push(query.status === 'published' ? "status = 'published'" : "status = 'draft'")
    for (const filter of query.filters) conditions.push(filterSql(filter, params))
    if (query.q !== null) {
      params.push(dialect.bindText(fold(query.q)))
      conditions.push(dialect.search)
    }
    return conditions
  }

  const orderSql = (sort: readonly SortKey[], params: Params): string => {
    const terms = sort.map(key => `${keySql(key.field, params)} ${key.direction === 'desc' ? 'DESC' : 'ASC'}${dialect.nulls(key.direction)}`)
    terms.push('slug ASC')
    return terms.join(', ')
  }

  /** The OR form of "after the position" from sort key `i` on, for the keys a segment's range leaves tied. */
  const afterFrom = (i: number, sort: readonly SortKey[], position: KeysetPosition, params: Params): string => {
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

  /**
   * One to two conditions whose matches, each in the query's order, follow one another: read
   * the first, then the next while the page is not full. Each one bounds the first sort key by a
   * range (or IS NULL), so an index walk starts at the position rather than at the top, and a
   * page deep in a walk costs what the first did. No value sorts first ascending and last
   * descending, so a descending walk reaches the entries without a value last, in a segment of
   * their own.
   */
  const afterSegments = (sort: readonly SortKey[], position: KeysetPosition): Segment[] => {
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

  const indexKeySql = (path: readonly string[], kind: ValueKind): string | null =>
    dialect.isLiteralPath(path) ? dialect.dataKey(path, kind, []) : null

  return { keySql, indexKeySql, filterSql, conditionsSql, orderSql, afterSegments, bindKey }
}

/** The SQLite store's builder (lib/store/sqlite.ts). */
export const { keySql, indexKeySql, filterSql, conditionsSql, orderSql, afterSegments } = sqlBuilder(sqliteDialect)
