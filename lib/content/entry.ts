// Entries at the API boundary (interface.md "Content entry", contract §4): reading the system
// fields out of a request body, and rendering a stored entry the same way every time, since the
// ETag is a hash of the exact bytes.
import { badRequest } from '../errors.js'
import { valueAtPath } from '../query/values.js'
import { checkSlug, isNormalSlug } from '../slug.js'
import type { FieldDefinition } from '../../types/schema.js'
import type { EntryStatus, StoredEntry } from '../../types/store.js'

/** The fields every entry carries in a response, in this order, before its data fields. */
export const SYSTEM_FIELDS = ['_slug', '_status', '_created_at', '_updated_at'] as const
export const ENTRY_STATUSES: readonly EntryStatus[] = ['draft', 'published']

const SYSTEM = new Set<string>(SYSTEM_FIELDS)

export type Data = Record<string, unknown>

/** The view of an entry in a response: system fields first, then the data fields. */
export interface EntryView {
  _slug: string
  _status: EntryStatus
  _created_at: string
  _updated_at: string
  [field: string]: unknown
}

export function isPlainObject (value: unknown): value is Data {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === Object.prototype || proto === null
}

/**
 * Sets an own enumerable property. Plain assignment with the key `__proto__` would replace the
 * object's prototype instead; stored JSON may hold such a key as an ordinary own property.
 */
export function setOwn (target: Data, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    target[key] = value
  }
}

/** The request body as an object, or a 400. */
export function bodyObject (body: unknown): Data {
  if (!isPlainObject(body)) throw badRequest('The request body must be a JSON object.')
  return body
}

/**
 * The schema data of a body: every key but the system fields. `_slug` is taken from the body on
 * create and from the path on update; `_created_at`/`_updated_at` are kept by the store, so a
 * client that sends back what it read (PUT after GET) is not refused for carrying them.
 */
export function dataOf (body: Data): Data {
  const data: Data = {}
  for (const key of Object.keys(body)) {
    if (!SYSTEM.has(key)) setOwn(data, key, body[key])
  }
  return data
}

/** `_slug` of a create body: a string that passes slug validation, normalized; otherwise 400. */
export function bodySlug (value: unknown): string {
  if (typeof value !== 'string') throw badRequest('_slug is required and must be a string.')
  const check = checkSlug(value)
  if (!check.valid) throw badRequest(`_slug is not valid: ${check.error ?? 'Slug is not valid.'}`)
  return check.normalized
}

/** A slug from the URL path, normalized; 400 when it is not valid (path characters included). */
export function pathSlug (value: string): string {
  // The common case, an already normalized slug, skips the Unicode normalization.
  if (isNormalSlug(value)) return value
  const check = checkSlug(value)
  if (!check.valid) throw badRequest(`The slug in the path is not valid: ${check.error ?? 'Slug is not valid.'}`)
  return check.normalized
}

/** `_status` of a body: `draft` or `published`; `fallback` when absent; otherwise 400. */
export function bodyStatus (body: Data, fallback: EntryStatus): EntryStatus {
  if (!Object.hasOwn(body, '_status')) return fallback
  const value = body._status
  if (value === 'draft' || value === 'published') return value
  throw badRequest("_status must be 'draft' or 'published'.")
}

/** The value at a dotted path, or undefined. */
export function valueAt (data: Data, path: string): unknown {
  return valueAtPath(data, path.split('.'))
}

/**
 * PUT keeps the stored value of a readonly or auto field that the body leaves out (contract §4).
 * A nested path is kept only inside an object the body does send: dropping the whole parent
 * object is a change the readonly check sees. Returns a new object; inputs are not modified.
 */
export function keepStoredValues (next: Data, stored: Data, paths: readonly string[]): Data {
  let result = next
  for (const path of paths) {
    const segments = path.split('.')
    const kept = valueAt(stored, path)
    if (kept === undefined) continue
    if (result === next) result = { ...next }
    // Copy the objects along the path so the caller's body is left untouched.
    let parent: Data = result
    let ok = true
    for (const segment of segments.slice(0, -1)) {
      const child = Object.hasOwn(parent, segment) ? parent[segment] : undefined
      if (!isPlainObject(child)) { ok = false; break }
      const copy = { ...child }
      setOwn(parent, segment, copy)
      parent = copy
    }
    const last = segments[segments.length - 1] as string
    if (ok && !Object.hasOwn(parent, last)) setOwn(parent, last, kept)
  }
  return result
}

/**
 * Data with its keys in schema order (declared fields first, at every depth, then any others in
 * the order received), so a response's bytes and ETag do not depend on a client's key order.
 */
export function orderFields (fields: Record<string, FieldDefinition>, data: Data): Data {
  const out: Data = {}
  for (const name of Object.keys(fields)) {
    if (!Object.hasOwn(data, name)) continue
    setOwn(out, name, orderValue(fields[name] as FieldDefinition, data[name]))
  }
  for (const key of Object.keys(data)) {
    if (!Object.hasOwn(fields, key)) setOwn(out, key, data[key])
  }
  return out
}

function orderValue (field: FieldDefinition, value: unknown): unknown {
  if (field.field_type === 'object' && field.fields !== undefined && isPlainObject(value)) {
    return orderFields(field.fields, value)
  }
  if (field.field_type === 'array' && field.items !== undefined && Array.isArray(value)) {
    const items = field.items
    return value.map(item => orderValue(items, item))
  }
  return value
}

/** The response view of a stored entry. Spread defines properties, so no key can reach a prototype. */
export function entryView (entry: StoredEntry): EntryView {
  return {
    _slug: entry.slug,
    _status: entry.status,
    _created_at: entry.createdAt,
    _updated_at: entry.updatedAt,
    ...entry.data
  }
}

/** A `_fields` list as a tree: `seo.title,seo.image,title` → { seo: { title, image }, title }. */
type FieldTree = Map<string, FieldTree | true>

function fieldTree (fields: readonly string[]): FieldTree {
  const tree: FieldTree = new Map()
  for (const field of fields) {
    let node = tree
    const segments = field.split('.')
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i] as string
      if (segment === '') break
      const current = node.get(segment)
      if (current === true) break
      if (i === segments.length - 1) {
        node.set(segment, true)
      } else {
        const child: FieldTree = current ?? new Map()
        node.set(segment, child)
        node = child
      }
    }
  }
  return tree
}

function pick (data: Data, tree: FieldTree): Data {
  const out: Data = {}
  for (const key of Object.keys(data)) {
    const spec = tree.get(key)
    if (spec === undefined) continue
    const value = data[key]
    if (spec === true) setOwn(out, key, value)
    else if (isPlainObject(value)) setOwn(out, key, pick(value, spec))
  }
  return out
}

/**
 * `_fields` projection: the system fields and the listed data fields (a dotted path keeps that
 * part of a nested object), in the entry's own key order.
 */
export function projectFields (view: EntryView, fields: readonly string[] | null): EntryView {
  if (fields === null) return view
  const tree = fieldTree(fields.filter(f => !SYSTEM.has(f)))
  const data: Data = {}
  for (const key of Object.keys(view)) if (!SYSTEM.has(key)) setOwn(data, key, view[key])
  return {
    _slug: view._slug,
    _status: view._status,
    _created_at: view._created_at,
    _updated_at: view._updated_at,
    ...pick(data, tree)
  }
}
