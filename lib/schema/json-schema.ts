// The JSON Schema (draft-07) notation of a schema file (contract §5): converted into our own
// field model, which is then validated like any other definition. Keywords that carry no
// meaning in the model (`$id`, `examples`, `$comment`, ...) are ignored.
import { isJsonObject } from './rules.js'

/** A top-level `$schema` naming draft-07, or `type: "object"` with `properties`. */
export function isJsonSchemaDocument (doc: Record<string, unknown>): boolean {
  if (typeof doc.$schema === 'string' && doc.$schema.includes('draft-07')) return true
  return doc.type === 'object' && isJsonObject(doc.properties)
}

/** The entry identifier in JSON Schema notation; not a field. */
const SLUG_PROPERTY = '_slug'

/** Our own top-level properties, honoured when a JSON Schema document carries them. */
const PASSTHROUGH = ['label', 'reusable', 'extends', 'tags', 'category', 'default_sort', 'default_order', 'display_field']

export interface Conversion {
  /** The definition in native notation (still to be validated). */
  definition: Record<string, unknown>
  /** Constructs the model cannot express, one message per property. */
  errors: string[]
}

const FORMAT_TYPES: Readonly<Record<string, string>> = {
  date: 'date',
  'date-time': 'datetime',
  email: 'email',
  uri: 'url'
}

function requiredSet (schema: Record<string, unknown>): Set<string> {
  return new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [])
}

function convertProperties (
  properties: Record<string, unknown>, required: Set<string>, prefix: string, errors: string[]
): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  for (const [name, prop] of Object.entries(properties)) {
    if (prefix === '' && name === SLUG_PROPERTY) continue
    const field = convertProperty(prefix === '' ? name : `${prefix}.${name}`, prop, errors)
    if (field === null) continue
    if (required.has(name)) field.required = true
    fields[name] = field
  }
  return fields
}

/** The one type of a `type` keyword, `["string", "null"]` counting as `string`. */
function singleType (prop: Record<string, unknown>): unknown {
  const type = prop.type
  if (Array.isArray(type)) {
    const types = type.filter(t => t !== 'null')
    return types.length === 1 ? types[0] : type
  }
  if (type === undefined && Array.isArray(prop.enum)) {
    const values = prop.enum.filter(v => v !== null)
    if (values.length > 0 && values.every(v => typeof v === 'string')) return 'string'
    if (values.length > 0 && values.every(v => typeof v === 'number')) return 'number'
  }
  return type
}

function enumOptions (prop: Record<string, unknown>): unknown[] | undefined {
  return Array.isArray(prop.enum) ? prop.enum.filter(v => v !== null) : undefined
}

function convertProperty (path: string, prop: unknown, errors: string[]): Record<string, unknown> | null {
  if (!isJsonObject(prop)) {
    errors.push(`${path}: must be a JSON Schema object`)
    return null
  }
  const field: Record<string, unknown> = {}
  const type = singleType(prop)
  const options = enumOptions(prop)
  switch (type) {
    case 'string':
      if (options !== undefined) {
        field.field_type = 'select'
        field.options = options
      } else {
        field.field_type = typeof prop.format === 'string' ? (FORMAT_TYPES[prop.format] ?? 'string') : 'string'
        if (prop.minLength !== undefined) field.min_length = prop.minLength
        if (prop.maxLength !== undefined) field.max_length = prop.maxLength
        if (prop.pattern !== undefined) field.pattern = prop.pattern
      }
      break
    case 'number':
    case 'integer':
      if (options !== undefined) {
        field.field_type = 'select'
        field.options = options
      } else {
        field.field_type = type
        if (prop.minimum !== undefined) field.min = prop.minimum
        if (prop.maximum !== undefined) field.max = prop.maximum
      }
      break
    case 'boolean':
      field.field_type = 'boolean'
      break
    case 'object':
      if (isJsonObject(prop.properties)) {
        field.field_type = 'object'
        field.fields = convertProperties(prop.properties, requiredSet(prop), path, errors)
      } else {
        // A free-form object: no fields to describe.
        field.field_type = 'json'
      }
      break
    case 'array': {
      const items = isJsonObject(prop.items) ? prop.items : undefined
      const itemOptions = items === undefined ? undefined : enumOptions(items)
      if (itemOptions !== undefined) {
        field.field_type = 'multiselect'
        field.options = itemOptions
      } else {
        field.field_type = 'array'
        const converted = items === undefined ? { field_type: 'json' } : convertProperty(`${path}.items`, items, errors)
        if (converted === null) return null
        field.items = converted
      }
      if (prop.minItems !== undefined) field.min_items = prop.minItems
      if (prop.maxItems !== undefined) field.max_items = prop.maxItems
      break
    }
    default:
      errors.push(`${path}: unsupported JSON Schema type ${JSON.stringify(type) ?? 'undefined'}`)
      return null
  }
  if (typeof prop.title === 'string') field.label = prop.title
  if (typeof prop.description === 'string') field.description = prop.description
  if (prop.default !== undefined) field.default = prop.default
  if (prop.readOnly === true) field.readonly = true
  return field
}

/** Converts a JSON Schema document into a native definition named `name` (the file name). */
export function fromJsonSchema (doc: Record<string, unknown>, name: string): Conversion {
  const errors: string[] = []
  const definition: Record<string, unknown> = { name }
  if (typeof doc.title === 'string') definition.label = doc.title
  if (typeof doc.description === 'string') definition.description = doc.description
  for (const key of PASSTHROUGH) if (doc[key] !== undefined) definition[key] = doc[key]
  definition.strict = doc.additionalProperties === false
  definition.fields = isJsonObject(doc.properties) ? convertProperties(doc.properties, requiredSet(doc), '', errors) : {}
  return { definition, errors }
}
