// The OpenAPI (3.0) schemas of one collection, generated from its resolved field model
// (contract §15): the entry as the API sends it, and the create, replace and patch bodies it
// accepts. `lectern types` turns the same schemas into TypeScript (lib/openapi/typescript.ts),
// so there is one generator of per-collection shapes, not two.
import type { FieldDefinition, ResolvedSchema } from '../../types/schema.js'
import { SLUG_MAX_LENGTH, SLUG_RE } from '../slug.js'

export type JsonSchema = Record<string, unknown>

/** Which shape a schema is generated for. */
export type Shape = 'entry' | 'create' | 'update' | 'patch'

/** The names of a collection's component schemas: `<name>.Entry`, `<name>.Create`, ... */
export const SHAPE_SUFFIX: Readonly<Record<Shape, string>> = { entry: 'Entry', create: 'Create', update: 'Update', patch: 'Patch' }

export const componentName = (collection: string, shape: Shape): string => `${collection}.${SHAPE_SUFFIX[shape]}`

/** A `$ref` to a component schema. */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` })

// The same expressions the entry validator applies (lib/schema/formats.ts), as patterns a
// validating proxy checks: ajv-formats' `date-time` would refuse the minutes-only form we accept.
const DATETIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$'
const COLOR_PATTERN = '^#[0-9a-fA-F]{6}$'

export const Slug = (): JsonSchema => ({ type: 'string', pattern: SLUG_RE.source, maxLength: SLUG_MAX_LENGTH })

const STRING_HINTS: Readonly<Record<string, JsonSchema>> = {
  date: { format: 'date' },
  datetime: { pattern: DATETIME_PATTERN, description: 'ISO 8601 date-time with an offset' },
  color: { pattern: COLOR_PATTERN },
  email: { description: 'An email address' },
  url: { description: 'An absolute http(s) URL or an asset path (/api/assets/...)' },
  asset: { description: 'An asset path (/api/assets/...) or an absolute http(s) URL' },
  slug: { pattern: SLUG_RE.source }
}

/** Context of a generation: the shape, and which collections a reference may resolve to. */
export interface FieldContext {
  shape: Shape
  strict: boolean
  /** Collections with an entry schema in the document (a resolved reference is one of them). */
  known: ReadonlySet<string>
}

function stringSchema (def: FieldDefinition): JsonSchema {
  const s: JsonSchema = { type: 'string', ...STRING_HINTS[def.field_type] }
  if (def.min_length !== undefined) s.minLength = def.min_length
  if (def.max_length !== undefined) s.maxLength = def.max_length
  // A user pattern is checked by our linear-time matcher; a proxy's RegExp may read it
  // differently (\B, lookarounds are refused by us), so it is documented, not declared.
  if (def.pattern !== undefined) s.description = `${String(s.description ?? 'A string')} matching /${def.pattern}/`
  return s
}

function referenceSchema (def: FieldDefinition, ctx: FieldContext): JsonSchema {
  const target = def.collection ?? ''
  // Bodies take slugs (a list also takes entries, read as their `_slug`); answers hold slugs,
  // or the entries themselves with `_resolve`.
  const resolved = ctx.known.has(target) ? ref(componentName(target, 'entry')) : { type: 'object' }
  const one: JsonSchema = ctx.shape === 'entry'
    ? { anyOf: [Slug(), resolved] }
    : Slug()
  if (def.multiple !== true) return { ...one, description: `The slug of a '${target}' entry` }
  const item = ctx.shape === 'entry' ? one : { anyOf: [Slug(), { type: 'object', required: ['_slug'], properties: { _slug: Slug() } }] }
  return withItemBounds({ type: 'array', items: item, uniqueItems: ctx.shape === 'entry', description: `Slugs of '${target}' entries` }, def)
}

function withItemBounds (s: JsonSchema, def: FieldDefinition): JsonSchema {
  if (def.min_items !== undefined) s.minItems = def.min_items
  if (def.max_items !== undefined) s.maxItems = def.max_items
  return s
}

function selectSchema (options: Array<string | number>): JsonSchema {
  const type = options.every(o => typeof o === 'number') ? 'number' : options.every(o => typeof o === 'string') ? 'string' : undefined
  return type === undefined ? { enum: [...options] } : { type, enum: [...options] }
}

/** The schema of one field's value (null aside: see `fieldSchema`). */
function valueSchema (def: FieldDefinition, ctx: FieldContext): JsonSchema {
  switch (def.field_type) {
    case 'number': case 'integer': {
      const s: JsonSchema = { type: def.field_type }
      if (def.min !== undefined) s.minimum = def.min
      if (def.max !== undefined) s.maximum = def.max
      return s
    }
    case 'boolean': return { type: 'boolean' }
    case 'select': return selectSchema(def.options ?? [])
    case 'multiselect': {
      const list = withItemBounds({ type: 'array', items: selectSchema(def.options ?? []), uniqueItems: ctx.shape === 'entry' }, def)
      // A write takes a lone option for a list of one (the write pipeline normalizes it).
      return ctx.shape === 'entry' ? list : { anyOf: [list, selectSchema(def.options ?? [])] }
    }
    case 'reference': return referenceSchema(def, ctx)
    case 'object': return objectSchema(def.fields ?? {}, ctx)
    case 'array': return withItemBounds({ type: 'array', items: def.items === undefined ? {} : fieldSchema(def.items, ctx) }, def)
    case 'json': return {}
    default: return stringSchema(def)
  }
}

/** Whether a body of this shape must hold the field. */
function mustHold (def: FieldDefinition, shape: Shape): boolean {
  if (def.required !== true) return false
  if (shape === 'create') return def.default === undefined && def.auto === undefined
  // PUT keeps readonly and auto fields the body leaves out.
  if (shape === 'update') return def.readonly !== true && def.auto === undefined
  // An answer may be projected (`_fields`) and a patch names only what changes.
  return false
}

/** A field's schema: an optional field also takes null (a cleared value), as does any field of a patch. */
export function fieldSchema (def: FieldDefinition, ctx: FieldContext): JsonSchema {
  const s = valueSchema(def, ctx)
  if (def.label !== undefined && s.title === undefined) s.title = def.label
  if (def.description !== undefined) s.description = def.description
  const nullable = def.required !== true || ctx.shape === 'patch'
  return nullable ? orNull(s) : s
}

/**
 * `s` or null. OpenAPI 3.0's `nullable` needs a `type` beside it: a union takes it on its
 * first member, and a schema without a type (a `json` field) already takes null.
 */
function orNull (s: JsonSchema): JsonSchema {
  if (Array.isArray(s.anyOf)) {
    const [first, ...rest] = s.anyOf as JsonSchema[]
    return { ...s, anyOf: [orNull(first ?? {}), ...rest] }
  }
  if (Array.isArray(s.enum)) s = { ...s, enum: [...s.enum as unknown[], null] }
  return s.type === undefined ? s : { ...s, nullable: true }
}

/** An object of fields: its properties and which of them a body of this shape must hold. */
export function objectSchema (fields: Record<string, FieldDefinition>, ctx: FieldContext): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  const required: string[] = []
  for (const [name, def] of Object.entries(fields)) {
    properties[name] = fieldSchema(def, ctx)
    if (mustHold(def, ctx.shape)) required.push(name)
  }
  const s: JsonSchema = { type: 'object', properties, additionalProperties: !ctx.strict }
  if (required.length > 0) s.required = required
  return s
}

const SYSTEM_FIELDS: JsonSchema = {
  _slug: { ...Slug(), description: 'Identifier within the collection' },
  _status: { type: 'string', enum: ['draft', 'published'], description: 'Publication state' },
  _created_at: { type: 'string', format: 'date-time', description: 'ISO 8601 UTC, kept by the store' },
  _updated_at: { type: 'string', format: 'date-time', description: 'ISO 8601 UTC, kept by the store' }
}

const STATUS = { type: 'string', enum: ['draft', 'published'] }

/** The system fields each shape has, and which it requires. */
function systemFields (shape: Shape): { properties: JsonSchema, required: string[] } {
  switch (shape) {
    case 'entry': return { properties: SYSTEM_FIELDS, required: Object.keys(SYSTEM_FIELDS) }
    case 'create': return {
      properties: { _slug: { type: 'string', minLength: 1, description: 'The entry slug; normalized before use' }, _status: { ...STATUS, description: 'Default published' } },
      required: ['_slug']
    }
    case 'update': return { properties: { _slug: { type: 'string', description: 'Ignored' }, _status: { ...STATUS, description: 'Absent: kept' } }, required: [] }
    case 'patch': return { properties: { _status: STATUS }, required: [] }
  }
}

/** The schema of a collection's entries (shape `entry`) or of a body it accepts. */
export function collectionSchema (schema: ResolvedSchema, shape: Shape, known: ReadonlySet<string>): JsonSchema {
  const data = objectSchema(schema.fields, { shape, strict: schema.strict, known })
  const system = systemFields(shape)
  const required = [...system.required, ...(data.required as string[] | undefined ?? [])]
  const out: JsonSchema = {
    type: 'object',
    properties: { ...system.properties, ...data.properties as JsonSchema },
    additionalProperties: data.additionalProperties
  }
  if (required.length > 0) out.required = required
  const label = schema.label ?? schema.name
  out.description = shape === 'entry' ? `An entry of '${label}'` : `The ${shape} body of a '${label}' entry`
  return out
}

/** Every component schema of every collection, keyed `<name>.<Shape>`. */
export function collectionComponents (schemas: readonly ResolvedSchema[]): Record<string, JsonSchema> {
  const known = new Set(schemas.map(s => s.name))
  const out: Record<string, JsonSchema> = {}
  for (const schema of schemas) {
    for (const shape of Object.keys(SHAPE_SUFFIX) as Shape[]) {
      out[componentName(schema.name, shape)] = collectionSchema(schema, shape, known)
    }
  }
  return out
}
