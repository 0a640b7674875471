// The entry validation compiler (STYLE rule 9): JSON Schema is generated from OUR field model,
// never from the user's JSON, and compiled with ajv once per schema version. Everything the
// write pipeline needs about a collection comes out of compileCollection as a CollectionModel.
import { randomUUID } from 'node:crypto'
import { Ajv, type ErrorObject, type FuncKeywordDefinition } from 'ajv'
import type {
  CollectionModel, FieldDefinition, FieldType, ReferenceField, ResolvedSchema
} from '../../types/schema.js'
import { valueAtPath } from '../query/values.js'
import { FORMATS } from './formats.js'
import { PatternMatcher } from './pattern.js'
import { isJsonObject } from './rules.js'

type JsonSchema = Record<string, unknown>
type Fields = Record<string, FieldDefinition>

/**
 * `required` means present and non-empty: null, an empty or blank string and an empty list
 * count as missing. An empty object does not (its own required fields speak for it).
 */
export function isEmptyValue (value: unknown): boolean {
  if (value === undefined || value === null) return true
  if (typeof value === 'string') return value.trim() === ''
  if (Array.isArray(value)) return value.length === 0
  return false
}

function newAjv (): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    strict: true,
    allowUnionTypes: true,
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
    // A field named `constructor` or `toString` is read as an own property, never from Object.prototype.
    ownProperties: true
  })
  for (const [name, validate] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate })
  // Annotation only: the field type, so that errors can be worded for the field.
  ajv.addVocabulary(['cmsField'])
  ajv.addKeyword({
    keyword: 'cmsRequired',
    schemaType: 'boolean',
    errors: false,
    validate: (required: boolean, data: unknown) => !required || !isEmptyValue(data)
  })
  // `pattern` runs on the linear-time matcher (pattern.ts), never on ajv's RegExp.
  ajv.addKeyword({ keyword: 'cmsPattern', type: 'string', schemaType: 'string', compile: patternValidator })
  return ajv
}

type DataValidateFunction = ReturnType<NonNullable<FuncKeywordDefinition['compile']>>

function patternValidator (source: string): DataValidateFunction {
  const matcher = new PatternMatcher(source)
  const validate: DataValidateFunction = (data: string) => {
    const result = matcher.check(data)
    if (result === 'match') return true
    validate.errors = [{ keyword: 'cmsPattern', params: { pattern: source, tooCostly: result === 'too-costly' } }]
    return false
  }
  return validate
}

const STRING_FORMATS: Partial<Record<FieldType, string>> = {
  email: 'cms-email',
  url: 'cms-url',
  slug: 'cms-slug',
  date: 'cms-date',
  datetime: 'cms-datetime',
  color: 'cms-color',
  asset: 'cms-asset'
}

function itemBounds (s: JsonSchema, def: FieldDefinition): void {
  if (def.min_items !== undefined) s.minItems = def.min_items
  if (def.max_items !== undefined) s.maxItems = def.max_items
}

/** The JSON Schema of one field. Every optional field also accepts null (a cleared value). */
function fieldSchema (def: FieldDefinition, strict: boolean): JsonSchema {
  const s: JsonSchema = { cmsField: def.field_type }
  switch (def.field_type) {
    case 'string': case 'text': case 'markdown': case 'richtext':
    case 'email': case 'url': case 'slug': case 'date': case 'datetime': case 'color': case 'asset': {
      s.type = ['string', 'null']
      const format = STRING_FORMATS[def.field_type]
      if (format !== undefined) s.format = format
      if (def.min_length !== undefined) s.minLength = def.min_length
      if (def.max_length !== undefined) s.maxLength = def.max_length
      if (def.pattern !== undefined) s.cmsPattern = def.pattern
      break
    }
    case 'number':
    case 'integer':
      s.type = [def.field_type, 'null']
      if (def.min !== undefined) s.minimum = def.min
      if (def.max !== undefined) s.maximum = def.max
      break
    case 'boolean':
      s.type = ['boolean', 'null']
      break
    case 'select':
      s.enum = [...(def.options ?? []), null]
      break
    case 'multiselect':
      s.type = ['array', 'null']
      s.items = { cmsField: 'select', enum: [...(def.options ?? [])] }
      s.uniqueItems = true
      itemBounds(s, def)
      break
    case 'reference':
      if (def.multiple === true) {
        s.type = ['array', 'null']
        s.items = { cmsField: 'reference', type: 'string', format: 'cms-slug' }
        s.uniqueItems = true
        itemBounds(s, def)
      } else {
        s.type = ['string', 'null']
        s.format = 'cms-slug'
      }
      break
    case 'object':
      Object.assign(s, objectSchema(def.fields ?? {}, strict, true))
      break
    case 'array':
      s.type = ['array', 'null']
      if (def.items !== undefined) s.items = fieldSchema(def.items, strict)
      itemBounds(s, def)
      break
    case 'json':
      break
  }
  if (def.required === true) s.cmsRequired = true
  return s
}

/** An object of fields; strict schemas reject unknown keys at every depth. */
function objectSchema (fields: Fields, strict: boolean, nullable: boolean): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  const required: string[] = []
  for (const [name, def] of Object.entries(fields)) {
    properties[name] = fieldSchema(def, strict)
    if (def.required === true) required.push(name)
  }
  const s: JsonSchema = { type: nullable ? ['object', 'null'] : 'object', properties, additionalProperties: !strict }
  if (required.length > 0) s.required = required
  return s
}

// ---- error messages -------------------------------------------------------------------

const TYPE_MESSAGES: Record<FieldType, string> = {
  string: 'must be a string',
  text: 'must be a string',
  markdown: 'must be a string',
  richtext: 'must be a string',
  number: 'must be a number',
  integer: 'must be an integer',
  boolean: 'must be true or false',
  date: 'must be a date (YYYY-MM-DD)',
  datetime: 'must be a date-time with an offset (ISO 8601, e.g. 2024-05-01T09:30:00Z)',
  email: 'must be an email address',
  url: 'must be an absolute http(s) URL or an asset path (/api/assets/...)',
  slug: 'must be a slug (lowercase letters, digits and hyphens)',
  color: 'must be a color (#rrggbb)',
  select: 'must be one of the options',
  multiselect: 'must be a list of options',
  reference: 'must be an entry slug',
  asset: 'must be an asset path (/api/assets/...) or an absolute http(s) URL',
  object: 'must be an object',
  array: 'must be a list',
  json: 'is not valid'
}

const FORMAT_MESSAGES: Record<string, FieldType> = {
  'cms-email': 'email',
  'cms-url': 'url',
  'cms-slug': 'slug',
  'cms-date': 'date',
  'cms-datetime': 'datetime',
  'cms-color': 'color',
  'cms-asset': 'asset'
}

function fieldTypeOf (schema: unknown): FieldType | undefined {
  return isJsonObject(schema) && typeof schema.cmsField === 'string' ? schema.cmsField as FieldType : undefined
}

function typeMessage (err: ErrorObject): string {
  const type = fieldTypeOf(err.parentSchema)
  if (type === undefined) return 'has the wrong type'
  if (type === 'reference' && isJsonObject(err.parentSchema) && Array.isArray(err.parentSchema.type) &&
      err.parentSchema.type.includes('array')) return 'must be a list of entry slugs'
  return TYPE_MESSAGES[type]
}

function describe (value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function problemOf (err: ErrorObject): string {
  const params = err.params as Record<string, unknown>
  switch (err.keyword) {
    case 'required':
    case 'cmsRequired':
      return 'is required'
    case 'additionalProperties':
      return 'is not a field of this schema (the schema is strict)'
    case 'type':
      return typeMessage(err)
    case 'format': {
      const type = FORMAT_MESSAGES[String(params.format)]
      if (type === 'slug' && fieldTypeOf(err.parentSchema) === 'reference') return TYPE_MESSAGES.reference
      return type === undefined ? 'has an invalid format' : TYPE_MESSAGES[type]
    }
    case 'enum': {
      const options = Array.isArray(err.schema) ? err.schema.filter(v => v !== null) : []
      return `must be one of ${options.map(describe).join(', ')}`
    }
    case 'minLength': return `must be at least ${describe(params.limit)} characters`
    case 'maxLength': return `must be at most ${describe(params.limit)} characters`
    case 'cmsPattern':
      return params.tooCostly === true
        ? `is too long to be checked against the pattern ${describe(params.pattern)}`
        : `must match the pattern ${describe(params.pattern)}`
    case 'minimum': return `must be at least ${describe(params.limit)}`
    case 'maximum': return `must be at most ${describe(params.limit)}`
    case 'minItems': return `must have at least ${describe(params.limit)} items`
    case 'maxItems': return `must have at most ${describe(params.limit)} items`
    case 'uniqueItems': return 'must not contain duplicates'
    default: return err.message ?? 'is not valid'
  }
}

function decodePointer (pointer: string): string[] {
  if (pointer === '') return []
  return pointer.slice(1).split('/').map(s => s.replace(/~1/g, '/').replace(/~0/g, '~'))
}

/** `layout.mobile`, `gallery[2].caption`: an index wherever the data at that point is a list. */
export function renderPath (segments: readonly string[], data: unknown): string {
  let out = ''
  let current: unknown = data
  for (const segment of segments) {
    if (Array.isArray(current)) {
      out += `[${segment}]`
      current = current[Number(segment)]
    } else {
      out += out === '' ? segment : `.${segment}`
      current = isJsonObject(current) && Object.hasOwn(current, segment) ? current[segment] : undefined
    }
  }
  return out
}

/** ajv errors as `"<field path>: <problem>"`; a path that is missing reports only that. */
export function renderErrors (errors: readonly ErrorObject[] | null | undefined, data: unknown): string[] {
  if (errors === null || errors === undefined) return []
  const byPath = new Map<string, string[]>()
  for (const err of errors) {
    const segments = decodePointer(err.instancePath)
    const params = err.params as Record<string, unknown>
    if (err.keyword === 'required' && typeof params.missingProperty === 'string') segments.push(params.missingProperty)
    if (err.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') segments.push(params.additionalProperty)
    const path = renderPath(segments, data) || '(entry)'
    const problem = problemOf(err)
    const list = byPath.get(path) ?? []
    if (!list.includes(problem)) list.push(problem)
    byPath.set(path, list)
  }
  const messages: string[] = []
  for (const [path, problems] of byPath) {
    const shown = problems.includes('is required') ? ['is required'] : problems
    for (const problem of shown) messages.push(`${path}: ${problem}`)
  }
  return messages
}

// ---- walking the field model ----------------------------------------------------------

interface FieldVisit {
  path: string
  def: FieldDefinition
}

/** Every field reachable through nested objects (not through arrays), depth first, with its dotted path. */
function * walkFields (fields: Fields, prefix = ''): Generator<FieldVisit> {
  for (const [name, def] of Object.entries(fields)) {
    const path = prefix === '' ? name : `${prefix}.${name}`
    yield { path, def }
    if (def.field_type === 'object' && def.fields !== undefined) yield * walkFields(def.fields, path)
  }
}

export function deepEqual (a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]))
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const ka = Object.keys(a).filter(k => a[k] !== undefined)
    const kb = Object.keys(b).filter(k => b[k] !== undefined)
    return ka.length === kb.length && ka.every(k => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
  }
  return false
}

function generate (auto: 'uuid' | 'now'): string {
  return auto === 'uuid' ? randomUUID() : new Date().toISOString()
}

function defaultsOfValue (def: FieldDefinition, value: unknown): unknown {
  if (def.field_type === 'object' && def.fields !== undefined && isJsonObject(value)) return defaultsOfObject(def.fields, value)
  if (def.field_type === 'array' && def.items !== undefined && Array.isArray(value)) {
    const items = def.items
    return value.map(item => defaultsOfValue(items, item))
  }
  return value
}

/** Absent (or null) fields get their `default`, else their `auto` value; nested objects present get theirs. */
function defaultsOfObject (fields: Fields, data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data }
  for (const [name, def] of Object.entries(fields)) {
    let value = Object.hasOwn(out, name) ? out[name] : undefined
    if (value === undefined || value === null) {
      if (def.default !== undefined) value = structuredClone(def.default)
      else if (def.auto !== undefined) value = generate(def.auto)
    }
    if (value === undefined) continue
    out[name] = defaultsOfValue(def, value)
  }
  return out
}

function asSlug (value: unknown): unknown {
  return isJsonObject(value) && typeof value._slug === 'string' ? value._slug : value
}

function unique (values: unknown[]): unknown[] {
  const seen: unknown[] = []
  for (const v of values) if (!seen.some(s => s === v)) seen.push(v)
  return seen
}

function normalizeValue (def: FieldDefinition, value: unknown): unknown {
  if (value === undefined || value === null) return value
  switch (def.field_type) {
    case 'multiselect': {
      const options: unknown[] = def.options ?? []
      const rank = (v: unknown): number => {
        const i = options.indexOf(v)
        return i === -1 ? options.length : i
      }
      // Stable sort: values that are not options keep their order at the end (and fail validation).
      return unique(Array.isArray(value) ? value : [value]).sort((a, b) => rank(a) - rank(b))
    }
    case 'reference':
      if (def.multiple === true) return unique((Array.isArray(value) ? value : [value]).map(asSlug))
      return asSlug(value)
    case 'object':
      return def.fields !== undefined && isJsonObject(value) ? normalizeObject(def.fields, value) : value
    case 'array': {
      const items = def.items
      return items !== undefined && Array.isArray(value) ? value.map(item => normalizeValue(items, item)) : value
    }
    default:
      return value
  }
}

function normalizeObject (fields: Fields, data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data }
  for (const [name, def] of Object.entries(fields)) {
    if (Object.hasOwn(out, name)) out[name] = normalizeValue(def, out[name])
  }
  return out
}

/** Compiles a resolved schema into the model the write pipeline uses. Call once per schema version. */
export function compileCollection (schema: ResolvedSchema): CollectionModel {
  const ajv = newAjv()
  const check = ajv.compile(objectSchema(schema.fields, schema.strict, false))

  const visits = [...walkFields(schema.fields)]
  const readonlyPaths = visits.filter(v => v.def.readonly === true).map(v => ({ path: v.path, segments: v.path.split('.') }))
  const uniqueFields = visits.filter(v => v.def.unique === true).map(v => v.path)
  const keptOnUpdate = visits.filter(v => v.def.readonly === true || v.def.auto !== undefined).map(v => v.path)
  const referenceFields: ReferenceField[] = visits
    .filter(v => v.def.field_type === 'reference' && v.def.collection !== undefined)
    .map(v => ({ path: v.path, collection: v.def.collection as string, multiple: v.def.multiple === true }))

  return {
    schema,
    applyDefaults: data => defaultsOfObject(schema.fields, data),
    normalize: data => normalizeObject(schema.fields, data),
    validate: data => {
      if (!isJsonObject(data)) return ['(entry): must be an object']
      return check(data) ? [] : renderErrors(check.errors, data)
    },
    readonlyViolations: (stored, next) => {
      const messages: string[] = []
      for (const { path, segments } of readonlyPaths) {
        const value = valueAtPath(next, segments)
        // Absent from the body: the stored value is kept (keptOnUpdate), so nothing changes.
        if (value === undefined) continue
        if (!deepEqual(valueAtPath(stored, segments), value)) messages.push(`${path}: is read-only and cannot be changed`)
      }
      return messages
    },
    uniqueFields,
    referenceFields,
    keptOnUpdate
  }
}

/**
 * Checks every `default` in a field map against its own field (used when a definition is
 * validated). One message per bad default, naming the field.
 */
export function defaultProblems (fields: Fields, prefix = ''): string[] {
  let ajv: Ajv | undefined
  const problems: string[] = []
  const visit = (map: Fields, base: string): void => {
    for (const [name, def] of Object.entries(map)) {
      const path = base === '' ? name : `${base}.${name}`
      if (def.default !== undefined) {
        ajv ??= newAjv()
        const check = ajv.compile({ type: 'object', properties: { value: fieldSchema(def, false) }, additionalProperties: false })
        const data = { value: def.default }
        if (!check(data)) {
          const inner = renderErrors(check.errors, data).map(m => m.replace(/^value(?:\.|(?=\[))?/, '').replace(/^: /, ''))
          problems.push(`${path}: default value is not valid (${inner.join('; ')})`)
        }
      }
      if (def.field_type === 'object' && def.fields !== undefined) visit(def.fields, path)
      if (def.field_type === 'array' && def.items?.field_type === 'object' && def.items.fields !== undefined) {
        visit(def.items.fields, `${path}.items`)
      }
    }
  }
  visit(fields, prefix)
  return problems
}
