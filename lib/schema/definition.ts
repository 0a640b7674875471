// Validation of a schema definition (interface.md "Schema definition", contract §5): one message
// per problem, each starting with the field's dotted path (or the schema property) and a colon.
import type { FieldDefinition } from '../../types/schema.js'
import { defaultProblems } from './compile.js'
import { patternProblem } from './pattern.js'
import {
  ATTRIBUTES, AUTO_VALUES, FIELD_NAME_MAX_LENGTH, FIELD_NAME_RE, MIME_PATTERN_RE, SCHEMA_PROPERTIES,
  isFieldType, isJsonObject, isSchemaName, schemaNameProblem
} from './rules.js'

interface FieldContext {
  /** Somewhere below an array's `items`: per-entry attributes (unique, readonly, auto) and references cannot apply. */
  inArray: boolean
  /** The `items` definition itself: it has no name, so `required` and `default` mean nothing. */
  isItems: boolean
  /** Nesting level through `fields` and `items` (the top-level fields are at 0). */
  depth: number
}

/** Deeper definitions are refused: nobody needs them, and they would only cost stack. */
export const MAX_FIELD_DEPTH = 16

const isNonNegativeInteger = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)
const isStringOrNull = (v: unknown): boolean => v === null || typeof v === 'string'

/** Why a field name is not acceptable, or null. */
export function fieldNameProblem (name: string): string | null {
  if (name.length > FIELD_NAME_MAX_LENGTH) return `is not a valid field name (at most ${FIELD_NAME_MAX_LENGTH} characters)`
  if (!FIELD_NAME_RE.test(name)) {
    return 'is not a valid field name (a letter first, then letters, digits, \'_\' or \'-\')'
  }
  return null
}

function checkFields (fields: unknown, prefix: string, ctx: FieldContext, errors: string[]): void {
  const where = prefix === '' ? 'fields' : `${prefix}.fields`
  if (!isJsonObject(fields)) {
    errors.push(`${where}: must be an object mapping field names to field definitions`)
    return
  }
  for (const [name, def] of Object.entries(fields)) {
    const path = prefix === '' ? name : `${prefix}.${name}`
    const nameProblem = fieldNameProblem(name)
    if (nameProblem !== null) {
      errors.push(`${path}: ${nameProblem}`)
      continue
    }
    checkField(def, path, { ...ctx, isItems: false }, errors)
  }
}

function checkField (def: unknown, path: string, ctx: FieldContext, errors: string[]): void {
  if (ctx.depth > MAX_FIELD_DEPTH) {
    errors.push(`${path}: fields are nested too deeply (at most ${MAX_FIELD_DEPTH} levels)`)
    return
  }
  if (!isJsonObject(def)) {
    errors.push(`${path}: must be a field definition object with a field_type`)
    return
  }
  const type = def.field_type
  if (type === undefined) {
    errors.push(`${path}: field_type is required`)
  } else if (!isFieldType(type)) {
    errors.push(`${path}: unknown field type ${JSON.stringify(type)}`)
  }
  const known = isFieldType(type) ? type : undefined

  for (const attribute of Object.keys(def)) {
    const allowed = ATTRIBUTES[attribute]
    if (allowed === undefined || !Object.hasOwn(ATTRIBUTES, attribute)) {
      errors.push(`${path}: unknown attribute '${attribute}'`)
    } else if (known !== undefined && !allowed.includes(known)) {
      errors.push(`${path}: attribute '${attribute}' is not allowed on a ${known} field`)
    }
  }
  // Without a known type, the type-specific checks below would only add noise.
  if (known === undefined) return

  const has = (attribute: string): boolean => def[attribute] !== undefined && (ATTRIBUTES[attribute]?.includes(known) ?? false)

  for (const flag of ['required', 'readonly', 'unique', 'multiple']) {
    if (has(flag) && typeof def[flag] !== 'boolean') errors.push(`${path}: ${flag} must be true or false`)
  }
  for (const text of ['label', 'description']) {
    if (has(text) && typeof def[text] !== 'string') errors.push(`${path}: ${text} must be a string`)
  }

  if (ctx.isItems) {
    for (const attribute of ['required', 'default']) {
      if (def[attribute] !== undefined) errors.push(`${path}: ${attribute} does not apply to array items`)
    }
  }
  if (ctx.inArray) {
    for (const attribute of ['unique', 'readonly', 'auto']) {
      if (def[attribute] !== undefined) errors.push(`${path}: ${attribute} is not supported inside array items`)
    }
    if (known === 'reference') errors.push(`${path}: a reference cannot be inside array items (use a reference with multiple: true)`)
  }

  if (has('auto')) {
    const values = AUTO_VALUES[known] ?? []
    if (typeof def.auto !== 'string' || !values.includes(def.auto)) {
      errors.push(`${path}: auto must be ${values.map(v => `'${v}'`).join(' or ')} on a ${known} field`)
    }
    if (def.default !== undefined) errors.push(`${path}: auto and default cannot both be set`)
  }

  for (const bound of ['min_length', 'max_length', 'min_items', 'max_items']) {
    if (has(bound) && !isNonNegativeInteger(def[bound])) errors.push(`${path}: ${bound} must be a whole number, 0 or more`)
  }
  for (const bound of ['min', 'max']) {
    if (has(bound) && !isFiniteNumber(def[bound])) errors.push(`${path}: ${bound} must be a number`)
  }
  const pairs: Array<[string, string]> = [['min_length', 'max_length'], ['min', 'max'], ['min_items', 'max_items']]
  for (const [low, high] of pairs) {
    const a = def[low]
    const b = def[high]
    if (has(low) && has(high) && isFiniteNumber(a) && isFiniteNumber(b) && a > b) {
      errors.push(`${path}: ${low} (${a}) must not be greater than ${high} (${b})`)
    }
  }

  if (has('pattern')) {
    if (typeof def.pattern !== 'string') {
      errors.push(`${path}: pattern must be a string`)
    } else {
      const problem = patternProblem(def.pattern)
      if (problem !== null) errors.push(`${path}: pattern ${problem}`)
    }
  }

  if (known === 'select' || known === 'multiselect') {
    const options = def.options
    if (options === undefined) {
      errors.push(`${path}: options is required for a ${known} field`)
    } else if (!Array.isArray(options) || options.length === 0) {
      errors.push(`${path}: options must be a non-empty list of strings or numbers`)
    } else {
      if (!options.every(o => typeof o === 'string' || isFiniteNumber(o))) {
        errors.push(`${path}: options must be a non-empty list of strings or numbers`)
      }
      if (new Set(options).size !== options.length) errors.push(`${path}: options must not contain duplicates`)
    }
  }

  if (known === 'reference') {
    if (def.collection === undefined) {
      errors.push(`${path}: collection is required for a reference field`)
    } else if (!isSchemaName(def.collection)) {
      errors.push(`${path}: collection must be a schema name (${schemaNameProblem(def.collection) ?? ''})`)
    }
    if (def.multiple === true) {
      if (def.unique !== undefined) errors.push(`${path}: unique only applies to a single reference`)
    } else {
      for (const bound of ['min_items', 'max_items']) {
        if (def[bound] !== undefined) errors.push(`${path}: ${bound} only applies to a reference with multiple: true`)
      }
    }
  }

  if (has('accept')) {
    const accept = def.accept
    const patterns = Array.isArray(accept) ? accept : [accept]
    if ((Array.isArray(accept) && accept.length === 0) ||
        !patterns.every(p => typeof p === 'string' && MIME_PATTERN_RE.test(p))) {
      errors.push(`${path}: accept must be a MIME type pattern such as image/* or a non-empty list of them`)
    }
  }

  if (known === 'object') {
    if (def.fields === undefined) errors.push(`${path}: fields is required for an object field`)
    else checkFields(def.fields, path, { ...ctx, depth: ctx.depth + 1 }, errors)
  }

  if (known === 'array') {
    if (def.items === undefined) errors.push(`${path}: items is required for an array field`)
    else checkField(def.items, `${path}.items`, { inArray: true, isItems: true, depth: ctx.depth + 1 }, errors)
  }
}

function checkExtends (value: unknown, name: unknown, errors: string[]): void {
  if (value === undefined || value === null) return
  const list = Array.isArray(value) ? value : [value]
  if (typeof value !== 'string' && !Array.isArray(value)) {
    errors.push('extends: must be a schema name, a list of schema names, or null')
    return
  }
  const seen = new Set<string>()
  for (const parent of list) {
    if (!isSchemaName(parent)) {
      errors.push(`extends: ${JSON.stringify(parent)} is not a valid schema name`)
    } else if (parent === name) {
      errors.push(`extends: a schema cannot extend itself ('${parent}')`)
    } else if (seen.has(parent)) {
      errors.push(`extends: '${parent}' is listed twice`)
    }
    if (typeof parent === 'string') seen.add(parent)
  }
}

/**
 * Every problem of a definition (native notation), `name` included. An empty list means the
 * value is a valid SchemaDefinition. Parents are not looked up here (see resolve.ts).
 */
export function checkDefinition (input: unknown): string[] {
  if (!isJsonObject(input)) return ['(schema): must be a JSON object']
  const errors: string[] = []
  const nameProblem = schemaNameProblem(input.name)
  if (input.name === undefined) errors.push('name: is required')
  else if (nameProblem !== null) errors.push(`name: ${nameProblem}`)

  for (const key of Object.keys(input)) {
    if (!SCHEMA_PROPERTIES.includes(key)) errors.push(`${key}: unknown schema property`)
  }
  if (input.fields === undefined) errors.push('fields: is required')
  else checkFields(input.fields, '', { inArray: false, isItems: false, depth: 0 }, errors)

  for (const key of ['label', 'description', 'category', 'default_sort', 'display_field']) {
    if (input[key] !== undefined && !isStringOrNull(input[key])) errors.push(`${key}: must be a string or null`)
  }
  for (const key of ['reusable', 'strict']) {
    if (input[key] !== undefined && typeof input[key] !== 'boolean') errors.push(`${key}: must be true or false`)
  }
  if (input.tags !== undefined && !(Array.isArray(input.tags) && input.tags.every(t => typeof t === 'string'))) {
    errors.push('tags: must be a list of strings')
  }
  if (input.default_order !== undefined && input.default_order !== null && input.default_order !== 'asc' && input.default_order !== 'desc') {
    errors.push('default_order: must be asc, desc or null')
  }
  checkExtends(input.extends, input.name, errors)

  // Defaults are checked against their own field once the structure is known to be sound.
  if (errors.length === 0) errors.push(...defaultProblems(input.fields as Record<string, FieldDefinition>))
  return errors
}
