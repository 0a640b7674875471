import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { fromJsonSchema, isJsonSchemaDocument } from '../../../lib/schema/json-schema.js'
import { checkDefinition } from '../../../lib/schema/definition.js'
import { findPackageRoot } from '../../../lib/schema/examples.js'

const COLUMNS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12']

t.test('detection: $schema naming draft-07, or type object with properties', async t => {
  t.ok(isJsonSchemaDocument({ $schema: 'http://json-schema.org/draft-07/schema#' }))
  t.ok(isJsonSchemaDocument({ type: 'object', properties: {} }))
  t.notOk(isJsonSchemaDocument({ name: 'x', fields: {} }))
  t.notOk(isJsonSchemaDocument({ type: 'object' }), 'type object without properties is not enough')
  t.notOk(isJsonSchemaDocument({ $schema: 'https://json-schema.org/draft/2020-12/schema' }))
})

t.test('the headline example of interface.md converts to the native model exactly', async t => {
  const root = findPackageRoot(import.meta.dirname)
  const doc = JSON.parse(readFileSync(path.join(root, 'examples/types/headline.json'), 'utf8'))
  t.ok(isJsonSchemaDocument(doc))
  const { definition, errors } = fromJsonSchema(doc, 'headline')
  t.strictSame(errors, [])
  t.strictSame(checkDefinition(definition), [], 'the converted definition is valid')
  t.equal(definition.name, 'headline', 'the name is the file name')
  t.equal(definition.strict, false, 'additionalProperties true: not strict')
  t.equal(definition.label, 'Headline', 'title becomes label')
  const fields = definition.fields as Record<string, Record<string, unknown>>
  t.strictSame(Object.keys(fields), ['internal', 'text', 'tag', 'align', 'layout'], '_slug is the identifier, not a field')
  t.strictSame(fields.internal, { field_type: 'string', description: 'Internal key', required: true })
  t.strictSame(fields.text, { field_type: 'string', description: 'Headline text', required: true })
  t.strictSame(fields.tag, { field_type: 'select', options: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'], default: 'h2', required: true })
  t.strictSame(fields.align, { field_type: 'select', options: ['left', 'center', 'right'], default: 'left' })
  t.strictSame(fields.layout, {
    field_type: 'object',
    description: 'Grid column widths',
    fields: {
      mobile: { field_type: 'select', options: COLUMNS, default: '12', required: true },
      tablet: { field_type: 'select', options: COLUMNS },
      desktop: { field_type: 'select', options: COLUMNS },
      spaceBottom: { field_type: 'select', options: [0, 0.5, 1, 1.5, 2], default: 0, description: 'Space below, in rem' },
      breakout: { field_type: 'boolean', default: false, description: 'Full-width layout' }
    }
  })
})

t.test('every mapping of contract §5', async t => {
  const { definition, errors } = fromJsonSchema({
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Everything',
    description: 'All the types',
    type: 'object',
    additionalProperties: false,
    required: ['s', 'missing'],
    properties: {
      s: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[a-z]+$', title: 'S', description: 'd', default: 'ab' },
      d: { type: 'string', format: 'date' },
      dt: { type: 'string', format: 'date-time' },
      e: { type: 'string', format: 'email' },
      u: { type: 'string', format: 'uri' },
      other: { type: 'string', format: 'hostname' },
      n: { type: 'number', minimum: 0, maximum: 10 },
      i: { type: 'integer', minimum: 1 },
      b: { type: 'boolean' },
      nullable: { type: ['string', 'null'] },
      o: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] },
      free: { type: 'object' },
      list: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, maxItems: 2 },
      anything: { type: 'array' },
      ro: { type: 'string', readOnly: true }
    }
  }, 'everything')
  t.strictSame(errors, [])
  t.equal(definition.strict, true, 'additionalProperties false: strict')
  t.equal(definition.label, 'Everything')
  t.equal(definition.description, 'All the types')
  const f = definition.fields as Record<string, Record<string, unknown>>
  t.strictSame(f.s, { field_type: 'string', min_length: 2, max_length: 5, pattern: '^[a-z]+$', label: 'S', description: 'd', default: 'ab', required: true })
  t.equal(f.d?.field_type, 'date')
  t.equal(f.dt?.field_type, 'datetime')
  t.equal(f.e?.field_type, 'email')
  t.equal(f.u?.field_type, 'url')
  t.equal(f.other?.field_type, 'string', 'an unmapped format is a plain string')
  t.strictSame(f.n, { field_type: 'number', min: 0, max: 10 })
  t.strictSame(f.i, { field_type: 'integer', min: 1 })
  t.strictSame(f.b, { field_type: 'boolean' })
  t.strictSame(f.nullable, { field_type: 'string' }, '["string", "null"] is a string')
  t.strictSame(f.o, { field_type: 'object', fields: { x: { field_type: 'integer', required: true } } })
  t.strictSame(f.free, { field_type: 'json' }, 'an object without properties is free-form json')
  t.strictSame(f.list, { field_type: 'array', items: { field_type: 'string' }, min_items: 1, max_items: 3 })
  t.strictSame(f.tags, { field_type: 'multiselect', options: ['a', 'b'], max_items: 2 }, 'array of enum: multiselect')
  t.strictSame(f.anything, { field_type: 'array', items: { field_type: 'json' } })
  t.strictSame(f.ro, { field_type: 'string', readonly: true })
  t.notOk('missing' in f, 'a required name without a property adds nothing')
  t.strictSame(checkDefinition(definition), [])
})

t.test('unsupported constructs are reported with their path', async t => {
  const { errors } = fromJsonSchema({
    type: 'object',
    properties: { a: { oneOf: [{ type: 'string' }] }, o: { type: 'object', properties: { deep: { type: 'null' } } }, bad: 3 }
  }, 'x')
  t.strictSame(errors, [
    'a: unsupported JSON Schema type undefined',
    'o.deep: unsupported JSON Schema type "null"',
    'bad: must be a JSON Schema object'
  ])
})

t.test('our own top-level properties pass through', async t => {
  const { definition } = fromJsonSchema({
    type: 'object', properties: {}, extends: 'seo', tags: ['x'], category: 'c', default_sort: '_slug', display_field: null, label: 'L', title: 'T'
  }, 'x')
  t.equal(definition.extends, 'seo')
  t.strictSame(definition.tags, ['x'])
  t.equal(definition.category, 'c')
  t.equal(definition.label, 'L', 'an explicit label wins over title')
})
