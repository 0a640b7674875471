import t from 'tap'
import { checkDefinition, fieldNameProblem } from '../../../lib/schema/definition.js'
import { isSchemaName, schemaNameProblem } from '../../../lib/schema/rules.js'
import { FIELD_TYPES } from '../../../types/schema.js'

const schema = (fields: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ name: 'thing', fields, ...extra })

t.test('schema names: ^[a-z0-9_]+$, 1 to 64 characters', async t => {
  for (const good of ['a', 'post', 'blog_post', 'x1', 'a'.repeat(64)]) t.ok(isSchemaName(good), good)
  for (const bad of ['', 'Post', 'blog-post', 'a b', '../x', 'a.json', 'a'.repeat(65), 'é']) {
    t.notOk(isSchemaName(bad), JSON.stringify(bad))
    t.type(schemaNameProblem(bad), 'string')
  }
  t.notOk(isSchemaName(5))
  t.equal(schemaNameProblem('ok'), null)
})

t.test('field names: a letter first, letters, digits, _ and -', async t => {
  for (const good of ['title', 'spaceBottom', 'og_image', 'a-b', 'x1']) t.equal(fieldNameProblem(good), null, good)
  for (const bad of ['_slug', '1a', 'a.b', 'a b', '', '__proto__', 'x'.repeat(65)]) t.type(fieldNameProblem(bad), 'string', bad)
})

t.test('a valid definition with every field type and attribute has no problems', async t => {
  const errors = checkDefinition({
    name: 'everything',
    label: 'Everything',
    description: null,
    extends: ['seo', 'base'],
    strict: true,
    reusable: false,
    tags: ['a'],
    category: null,
    default_sort: 'title',
    default_order: 'asc',
    display_field: 'title',
    fields: {
      title: { field_type: 'string', required: true, min_length: 1, max_length: 10, pattern: '^\\p{Lu}', unique: true, label: 'T', description: 'd' },
      id: { field_type: 'string', auto: 'uuid', readonly: true },
      text: { field_type: 'text', default: 'x' },
      md: { field_type: 'markdown' },
      rich: { field_type: 'richtext' },
      n: { field_type: 'number', min: -1.5, max: 2.5, default: 0 },
      i: { field_type: 'integer', min: 0 },
      b: { field_type: 'boolean', default: false },
      d: { field_type: 'date', default: '2024-02-29' },
      dt: { field_type: 'datetime', auto: 'now' },
      e: { field_type: 'email', unique: true },
      u: { field_type: 'url' },
      s: { field_type: 'slug' },
      c: { field_type: 'color', default: '#aabbcc' },
      sel: { field_type: 'select', options: ['a', 1], default: 1 },
      ms: { field_type: 'multiselect', options: ['x', 'y'], min_items: 0, max_items: 2, default: ['x'] },
      ref: { field_type: 'reference', collection: 'author', unique: true },
      refs: { field_type: 'reference', collection: 'category', multiple: true, min_items: 1, max_items: 3 },
      img: { field_type: 'asset', accept: 'image/*' },
      file: { field_type: 'asset', accept: ['image/png', 'application/pdf', '*/*'] },
      obj: { field_type: 'object', fields: { inner: { field_type: 'string', required: true, default: 'v' } } },
      arr: { field_type: 'array', items: { field_type: 'object', fields: { caption: { field_type: 'string', required: true } } }, max_items: 4 },
      j: { field_type: 'json', default: { any: ['thing'] } }
    }
  })
  t.strictSame(errors, [])
})

t.test('rule 4: an unknown field_type names the field and the type, one message per field', async t => {
  const errors = checkDefinition(schema({
    title: { field_type: 'strin' },
    body: { field_type: 'markdown' },
    when: { field_type: 'timestamp' },
    layout: { field_type: 'object', fields: { mobile: { field_type: 'enum' } } }
  }))
  t.strictSame(errors, [
    'title: unknown field type "strin"',
    'when: unknown field type "timestamp"',
    'layout.mobile: unknown field type "enum"'
  ])
})

t.test('every valid type is accepted as field_type', async t => {
  for (const type of FIELD_TYPES) {
    const def: Record<string, unknown> = { field_type: type }
    if (type === 'select' || type === 'multiselect') def.options = ['a']
    if (type === 'reference') def.collection = 'x'
    if (type === 'object') def.fields = {}
    if (type === 'array') def.items = { field_type: 'string' }
    t.strictSame(checkDefinition(schema({ f: def })), [], type)
  }
})

t.test('unknown attributes and attributes on the wrong type', async t => {
  t.strictSame(checkDefinition(schema({
    title: { field_type: 'string', maxLength: 5 },
    n: { field_type: 'number', options: [1] },
    s: { field_type: 'string', min: 1, collection: 'x' },
    b: { field_type: 'boolean', auto: 'now' },
    d: { field_type: 'date', auto: 'now' },
    tags: { field_type: 'multiselect', options: ['a'], unique: true },
    j: { field_type: 'json', constructor: 1 }
  })), [
    "title: unknown attribute 'maxLength'",
    "n: attribute 'options' is not allowed on a number field",
    "s: attribute 'min' is not allowed on a string field",
    "s: attribute 'collection' is not allowed on a string field",
    "b: attribute 'auto' is not allowed on a boolean field",
    "d: attribute 'auto' is not allowed on a date field",
    "tags: attribute 'unique' is not allowed on a multiselect field",
    "j: unknown attribute 'constructor'"
  ])
})

t.test('bad attribute values', async t => {
  const errors = checkDefinition(schema({
    a: { field_type: 'string', pattern: '[a-z', required: 'yes' },
    b: { field_type: 'string', min_length: 5, max_length: 2 },
    c: { field_type: 'number', min: 10, max: 1 },
    d: { field_type: 'integer', min: '1' },
    e: { field_type: 'reference' },
    f: { field_type: 'reference', collection: 'Bad Name' },
    g: { field_type: 'select' },
    h: { field_type: 'select', options: [] },
    i: { field_type: 'multiselect', options: ['a', 'a', true] },
    j: { field_type: 'multiselect', options: ['a'], min_items: 3, max_items: 1 },
    k: { field_type: 'reference', collection: 'x', min_items: 1 },
    l: { field_type: 'reference', collection: 'x', multiple: true, unique: true },
    m: { field_type: 'asset', accept: 'images' },
    n: { field_type: 'asset', accept: [] },
    o: { field_type: 'object' },
    p: { field_type: 'array' },
    q: { field_type: 'string', auto: 'uuid', default: 'x' },
    r: { field_type: 'datetime', auto: 'uuid' },
    s: { field_type: 'string', max_length: -1 },
    u: { field_type: 'string', label: 5 },
    v: 'string',
    w: {},
    x: { field_type: 'string', pattern: '\\_' },
    y: { field_type: 'text', pattern: '^(?=a)' },
    z: { field_type: 'slug', pattern: '(a)\\1' }
  }))
  t.strictSame(errors, [
    'a: required must be true or false',
    'a: pattern is not a valid regular expression (compiled with the u flag)',
    'b: min_length (5) must not be greater than max_length (2)',
    'c: min (10) must not be greater than max (1)',
    'd: min must be a number',
    'e: collection is required for a reference field',
    'f: collection must be a schema name (may only contain lowercase letters, digits and underscores)',
    'g: options is required for a select field',
    'h: options must be a non-empty list of strings or numbers',
    'i: options must be a non-empty list of strings or numbers',
    'i: options must not contain duplicates',
    'j: min_items (3) must not be greater than max_items (1)',
    'k: min_items only applies to a reference with multiple: true',
    'l: unique only applies to a single reference',
    'm: accept must be a MIME type pattern such as image/* or a non-empty list of them',
    'n: accept must be a MIME type pattern such as image/* or a non-empty list of them',
    'o: fields is required for an object field',
    'p: items is required for an array field',
    'q: auto and default cannot both be set',
    "r: auto must be 'now' on a datetime field",
    's: max_length must be a whole number, 0 or more',
    'u: label must be a string',
    'v: must be a field definition object with a field_type',
    'w: field_type is required',
    'x: pattern is not a valid regular expression (compiled with the u flag)',
    'y: pattern cannot use lookahead or lookbehind assertions ((?=, (?!, (?<=, (?<!): patterns run on a linear-time matcher',
    'z: pattern cannot use backreferences (\\1, \\k<name>): patterns run on a linear-time matcher'
  ])
})

t.test('nested fields and items are checked recursively with dotted paths', async t => {
  const errors = checkDefinition(schema({
    layout: { field_type: 'object', fields: { mobile: { field_type: 'select', options: ['1'], bogus: 1 }, 'Bad Name': { field_type: 'string' } } },
    gallery: {
      field_type: 'array',
      items: {
        field_type: 'object',
        required: true,
        fields: {
          caption: { field_type: 'string', max_length: 'x' },
          id: { field_type: 'string', unique: true, readonly: true, auto: 'uuid' },
          who: { field_type: 'reference', collection: 'author' },
          deep: { field_type: 'object', fields: { t: { field_type: 'nope' } } }
        }
      }
    },
    matrix: { field_type: 'array', items: { field_type: 'array', items: { field_type: 'integer', min: 'low' } } }
  }))
  t.strictSame(errors, [
    "layout.mobile: unknown attribute 'bogus'",
    "layout.Bad Name: is not a valid field name (a letter first, then letters, digits, '_' or '-')",
    'gallery.items: required does not apply to array items',
    'gallery.items.caption: max_length must be a whole number, 0 or more',
    'gallery.items.id: unique is not supported inside array items',
    'gallery.items.id: readonly is not supported inside array items',
    'gallery.items.id: auto is not supported inside array items',
    'gallery.items.who: a reference cannot be inside array items (use a reference with multiple: true)',
    'gallery.items.deep.t: unknown field type "nope"',
    'matrix.items.items: min must be a number'
  ])
})

t.test('defaults are checked against their own field', async t => {
  const errors = checkDefinition(schema({
    tag: { field_type: 'select', options: ['h1', 'h2'], default: 'h9' },
    n: { field_type: 'integer', default: 1.5, max: 10 },
    c: { field_type: 'color', default: 'red' },
    layout: { field_type: 'object', fields: { mobile: { field_type: 'string', default: 12 } }, default: { mobile: 3 } },
    ok: { field_type: 'string', default: 'fine' }
  }))
  t.strictSame(errors, [
    'tag: default value is not valid (must be one of h1, h2)',
    'n: default value is not valid (must be an integer)',
    'c: default value is not valid (must be a color (#rrggbb))',
    'layout: default value is not valid (mobile: must be a string)',
    'layout.mobile: default value is not valid (must be a string)'
  ])
})

t.test('top-level properties', async t => {
  t.strictSame(checkDefinition('nope'), ['(schema): must be a JSON object'])
  t.strictSame(checkDefinition({ fields: {} }), ['name: is required'])
  t.strictSame(checkDefinition({ name: 'Bad', fields: {} }), ['name: may only contain lowercase letters, digits and underscores'])
  t.strictSame(checkDefinition({ name: 'x' }), ['fields: is required'])
  t.strictSame(checkDefinition({ name: 'x', fields: [] }), ['fields: must be an object mapping field names to field definitions'])
  t.strictSame(checkDefinition({
    name: 'x',
    fields: {},
    label: 1,
    reusable: 'no',
    strict: 1,
    tags: 'a',
    default_order: 'up',
    extends: 5,
    colour: 'red'
  }), [
    'colour: unknown schema property',
    'label: must be a string or null',
    'reusable: must be true or false',
    'strict: must be true or false',
    'tags: must be a list of strings',
    'default_order: must be asc, desc or null',
    'extends: must be a schema name, a list of schema names, or null'
  ])
  t.strictSame(checkDefinition({ name: 'x', fields: {}, extends: ['x', 'seo', 'seo', 'Bad'] }), [
    "extends: a schema cannot extend itself ('x')",
    "extends: 'seo' is listed twice",
    'extends: "Bad" is not a valid schema name'
  ])
  t.strictSame(checkDefinition({ name: 'x', fields: {}, extends: null, default_order: null }), [])
})

t.test('definitions nested too deeply are refused, not recursed into', async t => {
  let field: Record<string, unknown> = { field_type: 'string' }
  for (let i = 0; i < 5000; i++) field = { field_type: 'object', fields: { inner: field } }
  const errors = checkDefinition(schema({ deep: field }))
  t.equal(errors.length, 1)
  t.match(errors[0], /^deep(\.inner){17}: fields are nested too deeply \(at most 16 levels\)$/)
  let ok: Record<string, unknown> = { field_type: 'string' }
  for (let i = 0; i < 15; i++) ok = { field_type: 'array', items: ok }
  t.strictSame(checkDefinition(schema({ fine: ok })), [])
})
