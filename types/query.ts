// The parsed form of a list request (contract §4 "List"). lib/query/parse.ts builds it from
// the query string and the resolved schema; both stores evaluate it and must agree exactly.

export type FilterOp = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'nin' | 'contains' | 'starts' | 'exists'
export const FILTER_OPS: readonly FilterOp[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'contains', 'starts', 'exists']

/** How values are compared: from the field's type. Dates compare as instants. */
export type ValueKind = 'string' | 'number' | 'boolean' | 'date'

export type Scalar = string | number | boolean

/** A field as the query sees it: a system field or a dotted path into the entry's data. */
export interface FieldRef {
  /** `_slug`, `_status`, `_created_at`, `_updated_at`, or a data path like `seo.title`. */
  name: string
  /** The data path segments (empty for system fields). */
  path: string[]
  system: boolean
  kind: ValueKind
  /** The field holds an array (multiselect, multiple reference, array): equality means "contains". */
  array: boolean
}

export interface Filter {
  field: FieldRef
  op: FilterOp
  /**
   * Typed already: a list for `in`/`nin`, a boolean for `exists`, else one scalar. The scalar is
   * of the field's kind: a string, a number, a boolean, or for dates the instant as epoch
   * milliseconds. `contains`/`starts` on text carry the text.
   */
  value: Scalar | Scalar[]
}

export interface SortKey {
  field: FieldRef
  direction: 'asc' | 'desc'
}

export interface ListQuery {
  page: number
  perPage: number
  /** Sort keys in order; the stores add the `_slug` ascending tie-break themselves. */
  sort: SortKey[]
  status: 'published' | 'draft' | 'all'
  /** Case-insensitive search across the entry's string values, or null. */
  q: string | null
  /** Fields to return (system fields always come back), or null for all. */
  fields: string[] | null
  filters: Filter[]
  /** `_after` (contract §10): the page starts after this position of the sort order; null for `_page` paging. */
  after: KeysetPosition | null
}

/**
 * A position in a list's order: the sort keys of an entry (typed as lib/query/values.ts `typedKey`:
 * numbers for number, boolean and date kinds, strings for text, null for no value), then its slug.
 */
export interface KeysetPosition {
  keys: Array<number | string | null>
  slug: string
}
