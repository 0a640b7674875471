// The content-schema model (interface.md "Schema definition", contract §5).
import { Type, type Static, type TUnsafe } from '@sinclair/typebox'

export const FIELD_TYPES = [
  'string', 'text', 'markdown', 'richtext', 'number', 'integer', 'boolean', 'date', 'datetime',
  'email', 'url', 'slug', 'color', 'select', 'multiselect', 'reference', 'asset', 'object', 'array', 'json'
] as const
export type FieldType = (typeof FIELD_TYPES)[number]

export interface FieldDefinition {
  field_type: FieldType
  required?: boolean
  default?: unknown
  auto?: 'uuid' | 'now'
  readonly?: boolean
  unique?: boolean
  label?: string
  description?: string
  min_length?: number
  max_length?: number
  pattern?: string
  min?: number
  max?: number
  options?: Array<string | number>
  min_items?: number
  max_items?: number
  collection?: string
  multiple?: boolean
  accept?: string | string[]
  fields?: Record<string, FieldDefinition>
  items?: FieldDefinition
}

/** A schema as written on disk or sent to POST/PUT /api/schemas (unresolved). */
export interface SchemaDefinition {
  name: string
  label?: string | null
  fields: Record<string, FieldDefinition>
  reusable?: boolean
  extends?: string | string[] | null
  strict?: boolean
  description?: string | null
  tags?: string[]
  category?: string | null
  default_sort?: string | null
  default_order?: 'asc' | 'desc' | null
  display_field?: string | null
}

/** A schema with `extends` applied: parent fields first, child overrides; strict if any ancestor is. */
export interface ResolvedSchema extends SchemaDefinition {
  fields: Record<string, FieldDefinition>
  reusable: boolean
  strict: boolean
  extends: string | string[] | null
}

// Loose TypeBox shapes for routes: the registry's own validator (lib/) gives the precise
// one-message-per-field errors, so the route schema only fixes the outer shape.
export const FieldDefinitionSchema = Type.Object({
  field_type: Type.String()
}, { additionalProperties: true })

/**
 * A string or null, as one `type` list rather than a union: Fastify's ajv coerces body values,
 * and in a union the string branch turns a null into "" before the null branch is tried; a
 * `type` list coerces only a value of neither type.
 */
const NullableString = (): TUnsafe<string | null> => Type.Unsafe<string | null>({ type: ['string', 'null'] })

export const SchemaDefinitionSchema = Type.Object({
  name: Type.String(),
  label: Type.Optional(NullableString()),
  fields: Type.Record(Type.String(), Type.Unknown()),
  reusable: Type.Optional(Type.Boolean()),
  // Untyped here: no `type` list or union takes a string, a list and null without ajv coercing
  // one into another (null → "", ['a'] → 'a'); checkDefinition gives the precise 422.
  extends: Type.Optional(Type.Unknown({ description: 'A schema name, a list of schema names, or null (no parent)' })),
  strict: Type.Optional(Type.Boolean()),
  description: Type.Optional(NullableString()),
  tags: Type.Optional(Type.Array(Type.String())),
  category: Type.Optional(NullableString()),
  default_sort: Type.Optional(NullableString()),
  default_order: Type.Optional(Type.Unsafe<'asc' | 'desc' | null>({ type: ['string', 'null'], enum: ['asc', 'desc', null] })),
  display_field: Type.Optional(NullableString())
}, { additionalProperties: true })
export type SchemaDefinitionBody = Static<typeof SchemaDefinitionSchema>

/** A reference field's location in an entry: `path` is the dotted field path (no arrays in between). */
export interface ReferenceField {
  path: string
  collection: string
  multiple: boolean
}

/**
 * Everything the write pipeline needs about one collection, compiled once per schema version
 * by lib/ (the registry caches it and recompiles after a schema write).
 */
export interface CollectionModel {
  readonly schema: ResolvedSchema
  /** Create only: fills `default` and `auto` values at every depth. Returns a new object. */
  applyDefaults: (data: Record<string, unknown>) => Record<string, unknown>
  /** Multi-select (lone value → array, deduplicated, ordered as `options`) and reference arrays (objects with `_slug` → slugs). Returns a new object. */
  normalize: (data: Record<string, unknown>) => Record<string, unknown>
  /** Every problem as one message `"<field path>: <what is wrong>"`; empty when valid. */
  validate: (data: Record<string, unknown>) => string[]
  /** Update only: one message per readonly field whose value differs from the stored one. */
  readonlyViolations: (stored: Record<string, unknown>, next: Record<string, unknown>) => string[]
  /** Dotted paths of `unique` fields. */
  readonly uniqueFields: readonly string[]
  /** Every reference field, for the reference check, `_resolve` and the reverse-reference index. */
  readonly referenceFields: readonly ReferenceField[]
  /** Dotted paths of `readonly` and `auto` fields, which PUT keeps when absent from the body. */
  readonly keptOnUpdate: readonly string[]
}

/** The schema registry (plugins/schemas.ts decorates `fastify.schemas` with it). */
export interface SchemaRegistry {
  /** Every schema name in the types directory, reusable ones included, sorted. */
  names: () => string[]
  /** The compiled model of a content collection; null when unknown, reusable or unresolvable. */
  collection: (name: string) => CollectionModel | null
  /** Every content collection (reusable and unresolvable schemas left out), sorted by name. */
  collections: () => CollectionModel[]
  /**
   * The schema file as stored (unresolved; a JSON Schema notation file comes back in that notation).
   * NOT_FOUND when no file; BAD_REQUEST when unparsable or its name differs.
   */
  readRaw: (name: string) => Promise<Record<string, unknown>>
  /** Reads the types directory again, between writes: another process sharing it wrote to it. */
  reload: () => Promise<void>
  /** POST /api/schemas: validates, writes `<name>.json` atomically, reloads. Returns the definition as written. */
  create: (definition: unknown) => Promise<SchemaDefinition>
  /** PUT /api/schemas/<name>: rewrites the existing file (`.json5` first). */
  update: (name: string, definition: unknown) => Promise<SchemaDefinition>
  /** DELETE /api/schemas/<name>: removes both `.json5` and `.json`. */
  remove: (name: string) => Promise<void>
}
