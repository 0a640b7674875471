// The list query parser (contract §4 "List"): a request's query string and the collection's
// resolved schema in, a typed ListQuery out, or a 400 naming the offending parameter.
//
// Fastify's default query string parser (fast-querystring) keeps brackets in the key
// (`title[eq]=x` arrives as { 'title[eq]': 'x' }) and turns a repeated key into an array; a
// qs-style parser would deliver { title: { eq: 'x' } }. All three shapes are accepted. A
// repeated filter adds one more condition (all must hold); a repeated `_sort` or `_fields`
// extends the list; any other repeated control parameter is a 400.
//
// Unknown parameters that start with `_` are a 400 (a typo such as `_per-page` must not pass
// silently in a build pipeline), except the bare `_` that HTTP clients add to bust caches, the
// common content parameters (`_resolve`, `_locale`, `_environment`) and any listed in
// `options.ignore`. Other names are field filters.
import { badRequest } from '../errors.js'
import { decodeAfter, queryFingerprint } from './keyset.js'
import { closestName } from './names.js'
import { instant } from './values.js'
import { FILTER_OPS, type FieldRef, type Filter, type FilterOp, type ListQuery, type Scalar, type SortKey, type ValueKind } from '../../types/query.js'
import type { FieldDefinition, ResolvedSchema } from '../../types/schema.js'

export interface ParseOptions {
  /** The caller sees drafts (authenticated); otherwise `_status` is forced to `published`. */
  seesDrafts: boolean
  /** More `_`-prefixed parameters that belong to someone else and are ignored here. */
  ignore?: readonly string[]
  /** What a keyset cursor (`_after`) is bound to besides the query: the list's scope and collection (keyset.ts). */
  cursorContext?: string
}

export const DEFAULT_PER_PAGE = 20
export const MAX_PER_PAGE = 1000
/** Pages beyond this are refused rather than turned into absurd offsets. */
export const MAX_PAGE = 1_000_000

/** Parameters of the list endpoint that are not filters. */
export const LIST_PARAMETERS = ['_page', '_per_page', '_sort', '_order', '_status', '_q', '_fields', '_after'] as const
/** Common content parameters read by others (interface.md "Endpoints"). */
export const COMMON_PARAMETERS = ['_resolve', '_locale', '_environment', '_'] as const

const SYSTEM_FIELDS: Record<string, FieldRef> = {
  _slug: { name: '_slug', path: [], system: true, kind: 'string', array: false },
  _created_at: { name: '_created_at', path: [], system: true, kind: 'date', array: false },
  _updated_at: { name: '_updated_at', path: [], system: true, kind: 'date', array: false }
}

const OPS = new Set<string>(FILTER_OPS)
const BRACKET_RE = /^([^[\]]+)\[([^[\]]*)\]$/
const NUMBER_RE = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/
// Path segments are matched against stored keys; control characters and empty segments have
// no business in a field name, so they are refused rather than looked for.
// eslint-disable-next-line no-control-regex
const BAD_SEGMENT_RE = /[\u0000-\u001F\u007F]/

/** Parses a list request's query string; throws a BAD_REQUEST CmsError naming the bad parameter. */
export function parseListQuery (raw: Record<string, unknown>, schema: ResolvedSchema, options: ParseOptions): ListQuery {
  const ignored = new Set<string>([...COMMON_PARAMETERS, ...(options.ignore ?? [])])
  const query: ListQuery = {
    page: 1,
    perPage: DEFAULT_PER_PAGE,
    sort: [],
    status: options.seesDrafts ? 'all' : 'published',
    q: null,
    fields: null,
    filters: [],
    after: null
  }
  let sortItems: string[] | null = null
  let after: string | null = null
  let paged = false
  let order: 'asc' | 'desc' = 'asc'

  for (const key of Object.keys(raw)) {
    const value = raw[key]
    if (value === undefined) continue
    switch (key) {
      case '_page':
        query.page = pageParameter(value)
        paged = true
        break
      case '_after':
        after = single(key, value)
        break
      case '_per_page':
        query.perPage = perPageParameter(value)
        break
      case '_sort':
        sortItems = list(key, value)
        break
      case '_order': {
        const text = single(key, value).toLowerCase()
        if (text !== 'asc' && text !== 'desc') throw badRequest('Invalid value for \'_order\': expected \'asc\' or \'desc\'.')
        order = text
        break
      }
      case '_status': {
        const text = single(key, value)
        if (text !== 'published' && text !== 'draft' && text !== 'all') {
          throw badRequest('Invalid value for \'_status\': expected \'published\', \'draft\' or \'all\'.')
        }
        // Callers who may not see drafts get published entries whatever they ask for.
        query.status = options.seesDrafts ? text : 'published'
        break
      }
      case '_q': {
        const text = single(key, value)
        if (text.includes('\u0000')) throw badRequest('Invalid value for \'_q\': it must not contain U+0000.')
        const trimmed = text.trim()
        query.q = trimmed === '' ? null : trimmed
        break
      }
      case '_fields': {
        const items = list(key, value)
        // System fields always come back, so naming them selects no data field.
        query.fields = items.length === 0 ? null : items.filter(item => !isSystemName(item)).map(item => resolveField(schema, item, '_fields').ref.name)
        break
      }
      default:
        if (ignored.has(key)) break
        query.filters.push(...filtersOf(schema, key, value))
    }
  }

  if (sortItems !== null && sortItems.length > 0) {
    query.sort = sortItems.map(item => sortKey(schema, item, order))
  } else if (typeof schema.default_sort === 'string' && schema.default_sort.trim() !== '') {
    const fallback = defaultSort(schema, schema.default_sort.trim(), schema.default_order ?? 'desc')
    if (fallback !== null) query.sort = [fallback]
  }
  if (after !== null) {
    if (paged) throw badRequest('Parameters \'_after\' and \'_page\' cannot be used together (contract §4).')
    query.after = decodeAfter(after, queryFingerprint(options.cursorContext ?? '', query), query.sort)
  }
  return query
}

// ---- parameter values ---------------------------------------------------------------------------

/** A scalar query value as text (a route schema with type coercion may have made it a number). */
function text (key: string, value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  throw badRequest(`Invalid value for '${key}'.`)
}

function single (key: string, value: unknown): string {
  if (Array.isArray(value)) {
    if (value.length !== 1) throw badRequest(`Parameter '${key}' must be given once.`)
    return text(key, value[0])
  }
  return text(key, value)
}

/** A comma list; repeated keys extend it. Blank items are dropped. */
function list (key: string, value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value]
  return values.flatMap(v => text(key, v).split(',')).map(s => s.trim()).filter(s => s !== '')
}

/**
 * `_page` of every list (content, assets, webhook deliveries): 1 when absent, else a whole number
 * from 1 to MAX_PAGE written in digits (`1e20`, `0x10` and `2.0` are a 400, not an offset).
 */
export function pageParameter (value: unknown): number {
  return value === undefined ? 1 : integerParameter('_page', single('_page', value), 1, MAX_PAGE)
}

/** `_per_page` of every list: DEFAULT_PER_PAGE when absent, else a whole number from 1 to MAX_PER_PAGE. */
export function perPageParameter (value: unknown): number {
  return value === undefined ? DEFAULT_PER_PAGE : integerParameter('_per_page', single('_per_page', value), 1, MAX_PER_PAGE)
}

function integerParameter (key: string, value: string, min: number, max: number): number {
  const trimmed = value.trim()
  if (!/^-?\d+$/.test(trimmed)) throw badRequest(`Invalid value for '${key}': expected a whole number from ${min} to ${max}.`)
  const n = Number(trimmed)
  if (n < min || n > max) throw badRequest(`Invalid value for '${key}': expected a whole number from ${min} to ${max}.`)
  return n
}

// ---- fields ---------------------------------------------------------------------------------------

interface Resolved {
  ref: FieldRef
  /** The schema definition, or undefined for a path outside the schema (non-strict) or into a json field. */
  definition: FieldDefinition | undefined
}

/**
 * Resolves a field name (system field or dotted data path) against the schema. `parameter`
 * names the query parameter in error messages.
 */
function resolveField (schema: ResolvedSchema, name: string, parameter: string): Resolved {
  const system = SYSTEM_FIELDS[name]
  if (system !== undefined && Object.hasOwn(SYSTEM_FIELDS, name)) return { ref: { ...system }, definition: undefined }
  if (name === '_status') {
    throw badRequest(`Parameter '${parameter}': filter on the publication state with '_status=published|draft|all'.`)
  }
  const path = name.split('.')
  for (const segment of path) {
    if (segment === '' || BAD_SEGMENT_RE.test(segment)) throw badRequest(`Parameter '${parameter}': '${name}' is not a valid field path.`)
  }
  let fields: Record<string, FieldDefinition> | undefined = schema.fields
  let definition: FieldDefinition | undefined
  let free = false
  for (let i = 0; i < path.length; i++) {
    const segment = path[i] as string
    if (free) continue
    const found: FieldDefinition | undefined = fields !== undefined && Object.hasOwn(fields, segment) ? fields[segment] : undefined
    if (found === undefined) {
      // Contract §4: an undeclared name is a 400 whatever `strict` says, so a typo fails loudly.
      const prefix = path.slice(0, i).join('.')
      const declared = Object.keys(fields ?? {}).map(key => (prefix === '' ? key : `${prefix}.${key}`))
      const known = prefix === '' ? [...declared, ...Object.keys(SYSTEM_FIELDS), ...LIST_PARAMETERS, ...COMMON_PARAMETERS] : declared
      throw badRequest(`Parameter '${parameter}': '${name}' is not a field of this collection.${suggestion(path.slice(0, i + 1).join('.'), known)}`)
    }
    definition = found
    const last = i === path.length - 1
    if (last) break
    if (found.field_type === 'object') {
      // An object without a declared field map holds anything.
      fields = found.fields
      if (fields === undefined) { definition = undefined; free = true }
    } else if (found.field_type === 'json') {
      definition = undefined
      free = true
    } else if (isArrayField(found)) {
      throw badRequest(`Parameter '${parameter}': '${name}' reaches inside the array field '${path.slice(0, i + 1).join('.')}', which is not supported.`)
    } else {
      throw badRequest(`Parameter '${parameter}': '${path.slice(0, i + 1).join('.')}' is a ${found.field_type} field and has no nested fields.`)
    }
  }
  const ref: FieldRef = { name, path, system: false, kind: 'string', array: false }
  if (definition !== undefined) {
    ref.array = isArrayField(definition)
    ref.kind = kindOf(ref.array ? elementDefinition(definition) : definition)
  }
  return { ref, definition }
}

function isArrayField (definition: FieldDefinition): boolean {
  return definition.field_type === 'array' || definition.field_type === 'multiselect' ||
    (definition.field_type === 'reference' && definition.multiple === true)
}

/** The definition of one element of an array field (multiselect and multiple references: the field itself). */
function elementDefinition (definition: FieldDefinition): FieldDefinition | undefined {
  return definition.field_type === 'array' ? definition.items : definition
}

function kindOf (definition: FieldDefinition | undefined): ValueKind {
  switch (definition?.field_type) {
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'date':
    case 'datetime':
      return 'date'
    case 'select':
    case 'multiselect': {
      const options = definition.options
      return options !== undefined && options.length > 0 && options.every(o => typeof o === 'number') ? 'number' : 'string'
    }
    default:
      return 'string'
  }
}

/** Object fields (and arrays of objects or of arrays) hold no comparable value. */
function isStructured (definition: FieldDefinition | undefined): boolean {
  if (definition === undefined) return false
  if (definition.field_type === 'object') return true
  if (definition.field_type === 'array') {
    const items = definition.items
    return items !== undefined && (items.field_type === 'object' || items.field_type === 'array')
  }
  return false
}

/** The message's hint: ` Did you mean '<closest>'?`, or nothing when no known name is close. */
function suggestion (name: string, known: readonly string[]): string {
  const closest = closestName(name, known.filter(k => k !== '_'))
  return closest === null ? '' : ` Did you mean '${closest}'?`
}

function isSystemName (name: string): boolean {
  return Object.hasOwn(SYSTEM_FIELDS, name) || name === '_status'
}

// ---- sort -----------------------------------------------------------------------------------------

function sortKey (schema: ResolvedSchema, item: string, order: 'asc' | 'desc'): SortKey {
  const descending = item.startsWith('-')
  const name = descending ? item.slice(1).trim() : item
  if (name === '') throw badRequest(`Parameter '_sort': '${item}' names no field.`)
  const { ref, definition } = resolveField(schema, name, '_sort')
  if (ref.array) throw badRequest(`Parameter '_sort': '${name}' is an array field and cannot be sorted by.`)
  if (isStructured(definition)) throw badRequest(`Parameter '_sort': '${name}' is an object field and cannot be sorted by.`)
  return { field: ref, direction: descending ? 'desc' : order }
}

/** The schema's `default_sort`, or null when it names nothing sortable (never a 400: the client did not ask). */
function defaultSort (schema: ResolvedSchema, item: string, order: 'asc' | 'desc'): SortKey | null {
  try {
    return sortKey(schema, item, order)
  } catch {
    return null
  }
}

// ---- filters --------------------------------------------------------------------------------------

function filtersOf (schema: ResolvedSchema, key: string, value: unknown): Filter[] {
  // qs-style nesting: { title: { eq: 'x' } }.
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const out: Filter[] = []
    for (const op of Object.keys(value)) out.push(...filtersOf(schema, `${key}[${op}]`, (value as Record<string, unknown>)[op]))
    return out
  }
  let name = key
  let op: FilterOp = 'eq'
  if (key.includes('[') || key.includes(']')) {
    const m = BRACKET_RE.exec(key)
    if (m === null) throw badRequest(`Parameter '${key}' is not a valid filter; use <field>=<value> or <field>[<operator>]=<value>.`)
    name = m[1] as string
    const candidate = m[2] as string
    if (!OPS.has(candidate)) {
      throw badRequest(`Parameter '${key}': unknown operator '${candidate}' (expected one of ${FILTER_OPS.join(', ')}).`)
    }
    op = candidate as FilterOp
  }
  if (name.startsWith('_') && !isSystemName(name) && !Object.hasOwn(schema.fields, name.split('.')[0] as string)) {
    const known = [...Object.keys(schema.fields), ...Object.keys(SYSTEM_FIELDS), ...LIST_PARAMETERS, ...COMMON_PARAMETERS]
    throw badRequest(`Unknown parameter '${key}'.${suggestion(name, known)}`)
  }
  const { ref, definition } = resolveField(schema, name, key)
  if (isStructured(definition)) throw badRequest(`Parameter '${key}': '${name}' is an object field and cannot be filtered on.`)
  const values = Array.isArray(value) ? value : [value]
  return values.map(v => filter(key, ref, op, text(key, v)))
}

function filter (key: string, field: FieldRef, op: FilterOp, value: string): Filter {
  switch (op) {
    case 'exists': {
      const flag = booleanValue(value)
      if (flag === null) throw badRequest(`Invalid value for '${key}': expected true or false.`)
      return { field, op, value: flag }
    }
    case 'in':
    case 'nin':
      return { field, op, value: value.split(',').map(item => typed(key, field, item)) }
    case 'contains':
      // On an array: the array contains the value. On text: a substring.
      if (field.array) return { field, op, value: typed(key, field, value) }
      if (field.kind !== 'string') throw notText(key, op, field)
      return { field, op, value }
    case 'starts':
      // On an array of text: some item starts with the value.
      if (field.kind !== 'string') throw notText(key, op, field)
      return { field, op, value }
    default:
      return { field, op, value: typed(key, field, value) }
  }
}

function notText (key: string, op: FilterOp, field: FieldRef): Error {
  return badRequest(`Parameter '${key}': '${op}' applies to text, and '${field.name}' holds ${field.kind} values.`)
}

function booleanValue (value: string): boolean | null {
  const v = value.trim().toLowerCase()
  if (v === 'true' || v === '1') return true
  if (v === 'false' || v === '0') return false
  return null
}

/** A filter value in the field's type; dates become epoch milliseconds (instants). */
function typed (key: string, field: FieldRef, value: string): Scalar {
  switch (field.kind) {
    case 'string':
      return value
    case 'number': {
      const v = value.trim()
      const n = NUMBER_RE.test(v) ? Number(v) : Number.NaN
      if (!Number.isFinite(n)) throw badRequest(`Invalid value for '${key}': '${value}' is not a number.`)
      return n
    }
    case 'boolean': {
      const flag = booleanValue(value)
      if (flag === null) throw badRequest(`Invalid value for '${key}': '${value}' is not true or false.`)
      return flag
    }
    case 'date': {
      const ms = instant(value.trim())
      if (ms === null) throw badRequest(`Invalid value for '${key}': '${value}' is not an ISO 8601 date or date-time.`)
      return ms
    }
  }
}
