// The static rules of the schema model (interface.md "Schema definition", contract §5):
// name alphabets, which attribute belongs to which field type, and the top-level properties.
import { FIELD_TYPES, type FieldType } from '../../types/schema.js'

export const SCHEMA_NAME_RE = /^[a-z0-9_]+$/
export const SCHEMA_NAME_MAX_LENGTH = 64

/**
 * Field names: a letter first (a leading `_` is reserved for system fields such as `_slug`),
 * then letters, digits, `_` or `-`. No dots: dotted paths address nested fields.
 */
export const FIELD_NAME_RE = /^[A-Za-z][A-Za-z0-9_-]*$/
export const FIELD_NAME_MAX_LENGTH = 64

export function isFieldType (value: unknown): value is FieldType {
  return typeof value === 'string' && (FIELD_TYPES as readonly string[]).includes(value)
}

/** True when `name` is a valid schema name (also what makes it safe as a file name). */
export function isSchemaName (name: unknown): name is string {
  return typeof name === 'string' && name.length >= 1 && name.length <= SCHEMA_NAME_MAX_LENGTH && SCHEMA_NAME_RE.test(name)
}

/** Why `name` is not a valid schema name, or null when it is. */
export function schemaNameProblem (name: unknown): string | null {
  if (typeof name !== 'string') return 'must be a string'
  if (name.length === 0) return 'must not be empty'
  if (name.length > SCHEMA_NAME_MAX_LENGTH) return `must be at most ${SCHEMA_NAME_MAX_LENGTH} characters`
  if (!SCHEMA_NAME_RE.test(name)) return 'may only contain lowercase letters, digits and underscores'
  return null
}

export const TEXT_TYPES: readonly FieldType[] = ['string', 'text', 'markdown', 'richtext', 'email', 'url', 'slug']

/** Field types whose value is one scalar (what `unique` may apply to). */
export const SCALAR_TYPES: readonly FieldType[] = [
  'string', 'text', 'markdown', 'richtext', 'number', 'integer', 'boolean', 'date', 'datetime',
  'email', 'url', 'slug', 'color', 'select', 'reference', 'asset'
]

export const ALL_TYPES: readonly FieldType[] = FIELD_TYPES

/** Every field attribute and the field types it is allowed on. */
export const ATTRIBUTES: Readonly<Record<string, readonly FieldType[]>> = {
  field_type: ALL_TYPES,
  required: ALL_TYPES,
  default: ALL_TYPES,
  readonly: ALL_TYPES,
  label: ALL_TYPES,
  description: ALL_TYPES,
  unique: SCALAR_TYPES,
  auto: ['string', 'datetime'],
  min_length: TEXT_TYPES,
  max_length: TEXT_TYPES,
  pattern: TEXT_TYPES,
  min: ['number', 'integer'],
  max: ['number', 'integer'],
  options: ['select', 'multiselect'],
  // On a reference only together with `multiple: true` (checked separately).
  min_items: ['multiselect', 'array', 'reference'],
  max_items: ['multiselect', 'array', 'reference'],
  collection: ['reference'],
  multiple: ['reference'],
  accept: ['asset'],
  fields: ['object'],
  items: ['array']
}

/** Which `auto` generators each type accepts. */
export const AUTO_VALUES: Readonly<Partial<Record<FieldType, readonly string[]>>> = {
  string: ['uuid', 'now'],
  datetime: ['now']
}

/** The properties a schema document (native notation) may carry. */
export const SCHEMA_PROPERTIES: readonly string[] = [
  'name', 'label', 'fields', 'reusable', 'extends', 'strict', 'description', 'tags', 'category',
  'default_sort', 'default_order', 'display_field'
]

/** System fields that lists can sort by (contract §4). */
export const SORTABLE_SYSTEM_FIELDS: readonly string[] = ['_slug', '_created_at', '_updated_at']

/** A MIME type or pattern as used by `accept`: `image/png`, `image/*` or `*\/*`. */
export const MIME_PATTERN_RE = /^(?:\*\/\*|[a-z0-9][a-z0-9!#$&^_.+-]*\/(?:\*|[a-z0-9][a-z0-9!#$&^_.+-]*))$/i

/**
 * What JSON calls an object: neither null nor an array. The schema layer reads parsed documents
 * only, so unlike isPlainObject (lib/content/entry.ts) it does not look at the prototype.
 */
export function isJsonObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
