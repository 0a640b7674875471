// Where the reference fields of a collection are (contract §5 `reference`), compiled once per
// schema version into a small tree that only holds the branches leading to a reference: the
// check, the formatting, `_resolve` and the reverse-reference index all walk entries with it.
// Unlike CollectionModel.referenceFields it also reaches into arrays (an `array` of references,
// or of objects holding references), since those are references too.
import type { CollectionModel, FieldDefinition } from '../../types/schema.js'
import { isPlainObject, setOwn, type Data } from '../content/entry.js'

/** A reference field: `field` is its schema path (dotted, array levels left out: `blocks.author`). */
export interface RefNode {
  kind: 'ref'
  field: string
  collection: string
  multiple: boolean
}

export interface ObjectNode {
  kind: 'object'
  fields: ReadonlyMap<string, PlanNode>
}

export interface ArrayNode {
  kind: 'array'
  item: PlanNode
}

export type PlanNode = RefNode | ObjectNode | ArrayNode

export interface ReferencePlan {
  /** The top-level fields that hold references (directly or below). */
  readonly fields: ReadonlyMap<string, PlanNode>
  /** Every reference field, in schema order. */
  readonly refs: readonly RefNode[]
  /** Schema paths of the reference fields, for `_resolve=<field>,<field>`. */
  readonly paths: ReadonlySet<string>
}

export const EMPTY_PLAN: ReferencePlan = { fields: new Map(), refs: [], paths: new Set() }

function nodeOf (def: FieldDefinition, path: string, refs: RefNode[]): PlanNode | null {
  switch (def.field_type) {
    case 'reference': {
      if (typeof def.collection !== 'string' || def.collection === '') return null
      const node: RefNode = { kind: 'ref', field: path, collection: def.collection, multiple: def.multiple === true }
      refs.push(node)
      return node
    }
    case 'object': {
      const fields = fieldsOf(def.fields ?? {}, path, refs)
      return fields.size === 0 ? null : { kind: 'object', fields }
    }
    case 'array': {
      if (def.items === undefined) return null
      const item = nodeOf(def.items, path, refs)
      return item === null ? null : { kind: 'array', item }
    }
    default:
      return null
  }
}

function fieldsOf (fields: Record<string, FieldDefinition>, prefix: string, refs: RefNode[]): Map<string, PlanNode> {
  const out = new Map<string, PlanNode>()
  for (const [name, def] of Object.entries(fields)) {
    const node = nodeOf(def, prefix === '' ? name : `${prefix}.${name}`, refs)
    if (node !== null) out.set(name, node)
  }
  return out
}

/** The plan of a field map (a resolved schema's `fields`). */
export function compilePlan (fields: Record<string, FieldDefinition>): ReferencePlan {
  const refs: RefNode[] = []
  const top = fieldsOf(fields, '', refs)
  if (refs.length === 0) return EMPTY_PLAN
  return { fields: top, refs, paths: new Set(refs.map(r => r.field)) }
}

// Models are recompiled after every schema write, so a model object identifies a schema version.
const plans = new WeakMap<CollectionModel, ReferencePlan>()

/** The plan of a collection model, compiled on first use and kept as long as the model lives. */
export function planOf (model: CollectionModel): ReferencePlan {
  let plan = plans.get(model)
  if (plan === undefined) {
    plan = compilePlan(model.schema.fields)
    plans.set(model, plan)
  }
  return plan
}

// One definition of these object guards and of Data: the content pipeline's.
export { isPlainObject, setOwn, type Data }

/** A shallow copy. Spread defines properties, so a `__proto__` key stays an own property. */
function copyOf (data: Data): Data {
  return { ...data }
}

/** A reference value found in an entry. */
export interface FoundReference {
  node: RefNode
  /** Where it is, for messages: `author`, `tags`, `blocks[2].author`. */
  path: string
  slug: string
}

/** Calls `fn` for every slug referenced by `data`, without building paths (the hot loop of `_resolve`). */
export function forEachReference (plan: ReferencePlan, data: Data, fn: (node: RefNode, slug: string) => void): void {
  if (plan.refs.length !== 0) visitRefFields(plan.fields, data, fn)
}

// forEachReference's walk, without closures: `_resolve` runs it over every entry it loads.
function visitRefFields (fields: ReadonlyMap<string, PlanNode>, obj: Data, fn: (node: RefNode, slug: string) => void): void {
  for (const [name, node] of fields) if (Object.hasOwn(obj, name)) visitRefs(node, obj[name], fn)
}

function visitRefs (node: PlanNode, value: unknown, fn: (node: RefNode, slug: string) => void): void {
  if (value === undefined || value === null) return
  if (node.kind === 'ref') {
    if (typeof value === 'string') fn(node, value)
    else if (Array.isArray(value)) for (const v of value) if (typeof v === 'string') fn(node, v)
  } else if (node.kind === 'object') {
    if (isPlainObject(value)) visitRefFields(node.fields, value, fn)
  } else if (Array.isArray(value)) {
    for (const item of value) visitRefs(node.item, item, fn)
  }
}

/**
 * Every slug referenced by `data` (strings only: the validator has refused anything else
 * before a write, and a read never trusts stored data blindly), in document order.
 */
export function findReferences (plan: ReferencePlan, data: Data): FoundReference[] {
  const out: FoundReference[] = []
  if (plan.refs.length === 0) return out
  const visit = (node: PlanNode, value: unknown, path: string): void => {
    if (value === undefined || value === null) return
    switch (node.kind) {
      case 'ref':
        if (typeof value === 'string') out.push({ node, path, slug: value })
        else if (Array.isArray(value)) for (const v of value) if (typeof v === 'string') out.push({ node, path, slug: v })
        return
      case 'object':
        if (isPlainObject(value)) visitFields(node.fields, value, path)
        return
      case 'array':
        if (Array.isArray(value)) value.forEach((item, i) => { visit(node.item, item, `${path}[${i}]`) })
    }
  }
  const visitFields = (fields: ReadonlyMap<string, PlanNode>, data: Data, prefix: string): void => {
    for (const [name, node] of fields) {
      if (Object.hasOwn(data, name)) visit(node, data[name], prefix === '' ? name : `${prefix}.${name}`)
    }
  }
  visitFields(plan.fields, data, '')
  return out
}

/** Returned by a mapReferences callback for an item of an `array` of references: drop the item. */
export const OMIT: unique symbol = Symbol('omit')

/**
 * Rewrites the value of every reference field with `fn` (copy on write: `data` is returned as
 * it is when `fn` changes nothing, and objects along a changed path are copied, never
 * modified, since stored entries are frozen). `fn` may answer OMIT for an item of an array of
 * references, which drops it; anywhere else OMIT means null.
 */
export function mapReferences (plan: ReferencePlan, data: Data, fn: (node: RefNode, value: unknown) => unknown): Data {
  if (plan.refs.length === 0) return data
  const visit = (node: PlanNode, value: unknown): unknown => {
    if (node.kind === 'ref') return fn(node, value)
    if (node.kind === 'object') return isPlainObject(value) ? visitFields(node.fields, value) : value
    if (!Array.isArray(value)) return value
    let out: unknown[] | null = null
    for (let i = 0; i < value.length; i++) {
      const next = visit(node.item, value[i])
      if (next !== value[i]) out ??= value.slice(0, i)
      if (out !== null && next !== OMIT) out.push(next)
    }
    return out ?? value
  }
  const visitFields = (fields: ReadonlyMap<string, PlanNode>, obj: Data): Data => {
    let out: Data | null = null
    for (const [name, node] of fields) {
      if (!Object.hasOwn(obj, name)) continue
      const value = obj[name]
      const next = visit(node, value)
      if (next !== value) {
        out ??= copyOf(obj)
        setOwn(out, name, next === OMIT ? null : next)
      }
    }
    return out ?? obj
  }
  return visitFields(plan.fields, data)
}

function slugOf (value: unknown): unknown {
  return isPlainObject(value) && typeof value._slug === 'string' ? value._slug : value
}

/**
 * A reference value formatted per schema (interface.md "References": on read, references are
 * formatted according to the schema): a single reference is a slug (the first one of an array
 * stored before the field became single), a multiple reference an array of slugs (a lone slug
 * stored before the field became multiple becomes a one-item array). `null` stays `null`.
 */
export function formatReference (node: RefNode, value: unknown): unknown {
  if (value === null || value === undefined) return value
  if (node.multiple) {
    if (Array.isArray(value)) {
      let out: unknown[] | null = null
      for (let i = 0; i < value.length; i++) {
        const slug = slugOf(value[i])
        if (slug !== value[i]) {
          out ??= value.slice()
          out[i] = slug
        }
      }
      return out ?? value
    }
    return [slugOf(value)]
  }
  if (Array.isArray(value)) return value.length === 0 ? null : slugOf(value[0])
  return slugOf(value)
}

/** Every reference of `data` formatted per schema; `data` itself when nothing changes. */
export function formatReferences (plan: ReferencePlan, data: Data): Data {
  return mapReferences(plan, data, formatReference)
}
