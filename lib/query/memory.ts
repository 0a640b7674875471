// A ListQuery evaluated over entries held in memory (the file store's index). The semantics are
// those of values.ts, operator by operator the same as the SQL of sql.ts:
//
//   eq gt gte lt lte in contains starts   hold only for a value of the field's kind
//   ne nin                                hold when eq / in do not (so also for no value)
//   exists=true                           the path holds something other than null
//   arrays                                eq/contains/in/gt…/starts: some item matches;
//                                         ne/nin: no item matches; a non-array holds no items
//   contains / starts on text             case-sensitive substring / prefix
//   _q                                    some string value at any depth contains the query,
//                                         compared case-insensitively (values.ts `fold`)
//   sort                                  no value first ascending, last descending; ties by slug
import { compareKeys, compareText, fold, typedKey, valueAtPath, type Key } from './values.js'
import type { FieldRef, Filter, ListQuery, Scalar, SortKey } from '../../types/query.js'
import type { StoredEntry } from '../../types/store.js'

/** An entry with what the query needs besides it: its folded search text (values.ts `searchText`). */
export interface Candidate {
  readonly entry: StoredEntry
  readonly search: string
}

export type Predicate = (candidate: Candidate) => boolean
export type Comparator = (a: Candidate, b: Candidate) => number

/** The raw JSON value a field names in an entry (system fields from the entry itself). */
export function rawValue (entry: StoredEntry, field: FieldRef): unknown {
  if (field.system) {
    switch (field.name) {
      case '_slug': return entry.slug
      case '_status': return entry.status
      case '_created_at': return entry.createdAt
      case '_updated_at': return entry.updatedAt
    }
    return undefined
  }
  return valueAtPath(entry.data, field.path)
}

/** The typed sort/compare key of a field in an entry. */
export function keyOf (entry: StoredEntry, field: FieldRef): Key {
  return typedKey(rawValue(entry, field), field.kind)
}

/** A filter value as a key: booleans become 1/0 like stored booleans. */
function valueKey (value: Scalar): Key {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value
}

function scalarTest (filter: Filter): (key: Key) => boolean {
  const { op } = filter
  if (op === 'in' || op === 'nin') {
    const set = new Set<Key>((filter.value as Scalar[]).map(valueKey))
    return key => key !== null && set.has(key)
  }
  const v = valueKey(filter.value as Scalar)
  switch (op) {
    case 'eq':
    case 'ne':
    case 'contains':
      if (op === 'contains' && !filter.field.array) {
        const needle = v as string
        return key => typeof key === 'string' && key.includes(needle)
      }
      return key => key !== null && key === v
    case 'gt': return key => key !== null && compareKeys(key, v) > 0
    case 'gte': return key => key !== null && compareKeys(key, v) >= 0
    case 'lt': return key => key !== null && compareKeys(key, v) < 0
    case 'lte': return key => key !== null && compareKeys(key, v) <= 0
    case 'starts': {
      const prefix = v as string
      return key => typeof key === 'string' && key.startsWith(prefix)
    }
    default:
      throw new Error(`unexpected operator ${op}`)
  }
}

/** One filter as a predicate over an entry. */
export function filterPredicate (filter: Filter): (entry: StoredEntry) => boolean {
  const { field, op } = filter
  if (op === 'exists') {
    const wanted = filter.value === true
    return entry => {
      const raw = rawValue(entry, field)
      return (raw !== undefined && raw !== null) === wanted
    }
  }
  const test = scalarTest(filter)
  // ne and nin are the negations of eq and in, so they hold where there is no value.
  const negated = op === 'ne' || op === 'nin'
  const { kind } = field
  if (field.array) {
    return entry => {
      const raw = rawValue(entry, field)
      let some = false
      if (Array.isArray(raw)) {
        for (const item of raw) {
          if (test(typedKey(item, kind))) { some = true; break }
        }
      }
      return negated ? !some : some
    }
  }
  return entry => {
    const hit = test(typedKey(rawValue(entry, field), kind))
    return negated ? !hit : hit
  }
}

/** The status, filters and `_q` of a query as one predicate. */
export function compilePredicate (query: Pick<ListQuery, 'status' | 'filters' | 'q'>): Predicate {
  const tests = query.filters.map(filterPredicate)
  const status = query.status === 'all' ? null : query.status
  const q = query.q === null ? null : fold(query.q)
  return candidate => {
    const entry = candidate.entry
    if (status !== null && entry.status !== status) return false
    for (let i = 0; i < tests.length; i++) {
      if (!(tests[i] as (e: StoredEntry) => boolean)(entry)) return false
    }
    return q === null || candidate.search.includes(q)
  }
}

/** The order of the sort keys, then `_slug` ascending. */
export function compileComparator (sort: readonly SortKey[]): Comparator {
  return (a, b) => {
    for (const key of sort) {
      const c = compareKeys(keyOf(a.entry, key.field), keyOf(b.entry, key.field))
      if (c !== 0) return key.direction === 'desc' ? -c : c
    }
    return compareText(a.entry.slug, b.entry.slug)
  }
}

/**
 * Sorts candidates once, computing each sort key once per entry (not per comparison).
 * Returns a new array.
 */
export function sortCandidates<C extends Candidate> (candidates: Iterable<C>, sort: readonly SortKey[]): C[] {
  const decorated: Array<{ c: C, keys: Key[] }> = []
  for (const c of candidates) decorated.push({ c, keys: sort.map(s => keyOf(c.entry, s.field)) })
  const directions = sort.map(s => (s.direction === 'desc' ? -1 : 1))
  decorated.sort((a, b) => {
    for (let i = 0; i < directions.length; i++) {
      const c = compareKeys(a.keys[i] as Key, b.keys[i] as Key)
      if (c !== 0) return c * (directions[i] as number)
    }
    const x = a.c.entry.slug
    const y = b.c.entry.slug
    return x < y ? -1 : x > y ? 1 : 0
  })
  return decorated.map(d => d.c)
}

/**
 * A page of sorted candidates: the matches from `offset` (0-based), at most `limit`, and the
 * number of matches. With `knownTotal`, the scan stops as soon as the page is full.
 */
export function selectPage (
  sorted: readonly Candidate[], predicate: Predicate, offset: number, limit: number, knownTotal: number | null
): { items: StoredEntry[], total: number } {
  const items: StoredEntry[] = []
  let matched = 0
  const end = offset + limit
  for (let i = 0; i < sorted.length; i++) {
    const c = sorted[i] as Candidate
    if (!predicate(c)) continue
    if (matched >= offset && matched < end) items.push(c.entry)
    matched++
    if (knownTotal !== null && matched >= end) return { items, total: knownTotal }
  }
  return { items, total: matched }
}

/**
 * A keyset page (contract §10): the first `limit` matches from index `start` of candidates in the
 * query's order (keyset.ts `firstAfter` finds it), and whether more follow.
 */
export function selectAfter (sorted: readonly Candidate[], predicate: Predicate, start: number, limit: number): { items: StoredEntry[], more: boolean } {
  const items: StoredEntry[] = []
  for (let i = start; i < sorted.length; i++) {
    const c = sorted[i] as Candidate
    if (!predicate(c)) continue
    if (items.length === limit) return { items, more: true }
    items.push(c.entry)
  }
  return { items, more: false }
}

/** A whole query over candidates in any order (sorts everything that matches). */
export function evaluateList (candidates: Iterable<Candidate>, query: ListQuery): { items: StoredEntry[], total: number } {
  const predicate = compilePredicate(query)
  const matching: Candidate[] = []
  for (const c of candidates) if (predicate(c)) matching.push(c)
  const sorted = sortCandidates(matching, query.sort)
  const offset = (query.page - 1) * query.perPage
  return { items: sorted.slice(offset, offset + query.perPage).map(c => c.entry), total: matching.length }
}
