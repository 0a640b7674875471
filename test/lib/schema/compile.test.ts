import t from 'tap'
import { compileCollection } from '../../../lib/schema/compile.js'
import { resolveSchemas } from '../../../lib/schema/resolve.js'
import { fromJsonSchema } from '../../../lib/schema/json-schema.js'
import type { CollectionModel, FieldDefinition, ResolvedSchema, SchemaDefinition } from '../../../types/schema.js'

function resolved (definition: SchemaDefinition): ResolvedSchema {
  const schema = resolveSchemas(new Map([[definition.name, definition]])).resolved.get(definition.name)
  if (schema === undefined) throw new Error('did not resolve')
  return schema
}

function model (fields: Record<string, FieldDefinition>, extra: Partial<SchemaDefinition> = {}): CollectionModel {
  return compileCollection(resolved({ name: 'thing', fields, ...extra }))
}

/** Messages for `{ f: value }` against a one-field schema. */
function check (def: FieldDefinition, value: unknown): string[] {
  return model({ f: def }).validate({ f: value })
}

t.test('text types: strings with lengths and a pattern', async t => {
  for (const type of ['string', 'text', 'markdown', 'richtext'] as const) {
    t.strictSame(check({ field_type: type }, 'hello'), [], `${type} accepts a string`)
    t.strictSame(check({ field_type: type }, 5), ['f: must be a string'], `${type} rejects a number`)
  }
  const def: FieldDefinition = { field_type: 'string', min_length: 2, max_length: 4 }
  t.strictSame(check(def, 'a'), ['f: must be at least 2 characters'])
  t.strictSame(check(def, 'abcde'), ['f: must be at most 4 characters'])
  t.strictSame(check(def, 'ab'), [])
  t.strictSame(check({ field_type: 'string', max_length: 2 }, '😀😀'), [], 'lengths count characters, not UTF-16 units')
  t.strictSame(check({ field_type: 'string', pattern: '^[a-z]+$' }, 'Abc'), ['f: must match the pattern ^[a-z]+$'])
  t.strictSame(check({ field_type: 'string', pattern: '^\\p{Lu}' }, 'Élan'), [], 'patterns use the u flag (\\p{...} works)')
  t.strictSame(check({ field_type: 'string', pattern: 'b' }, 'abc'), [], 'a pattern is searched, not anchored')
  t.strictSame(check({ field_type: 'array', items: { field_type: 'string', pattern: '^(a+)+$' } }, ['aa', `${'a'.repeat(40)}!`]),
    ['f[1]: must match the pattern ^(a+)+$'], 'items too, in linear time')
  t.strictSame(check({ field_type: 'string', pattern: '[ab]*a[ab]{400}c' }, 'ab'.repeat(20_000) + 'a'.repeat(20_000)),
    ['f: is too long to be checked against the pattern [ab]*a[ab]{400}c'])
})

t.test('number and integer: inclusive bounds', async t => {
  const n: FieldDefinition = { field_type: 'number', min: 0, max: 10 }
  t.strictSame(check(n, 0), [])
  t.strictSame(check(n, 10), [])
  t.strictSame(check(n, 2.5), [])
  t.strictSame(check(n, -0.1), ['f: must be at least 0'])
  t.strictSame(check(n, 10.5), ['f: must be at most 10'])
  t.strictSame(check(n, '5'), ['f: must be a number'], 'no coercion')
  t.strictSame(check({ field_type: 'integer' }, 2.5), ['f: must be an integer'])
  t.strictSame(check({ field_type: 'integer', min: 1 }, 0), ['f: must be at least 1'])
  t.strictSame(check({ field_type: 'integer' }, 3), [])
})

t.test('boolean', async t => {
  t.strictSame(check({ field_type: 'boolean' }, false), [])
  t.strictSame(check({ field_type: 'boolean' }, 'true'), ['f: must be true or false'])
})

t.test('date: YYYY-MM-DD and a real calendar date', async t => {
  const def: FieldDefinition = { field_type: 'date' }
  for (const ok of ['2024-02-29', '2000-02-29', '1999-12-31']) t.strictSame(check(def, ok), [], ok)
  for (const bad of ['2023-02-29', '1900-02-29', '2024-04-31', '2024-13-01', '2024-1-01', '2024-01-01T00:00:00Z', '']) {
    t.strictSame(check(def, bad), ['f: must be a date (YYYY-MM-DD)'], bad)
  }
  t.strictSame(check(def, 20240101), ['f: must be a date (YYYY-MM-DD)'], 'a number')
})

t.test('datetime: ISO 8601 with an offset', async t => {
  const def: FieldDefinition = { field_type: 'datetime' }
  for (const ok of ['2024-05-01T09:30:00Z', '2024-05-01T09:30:00.123Z', '2024-05-01T09:30:00+02:00', '2024-05-01T09:30-05:30', '2024-05-01T23:59:59.123456789Z']) {
    t.strictSame(check(def, ok), [], ok)
  }
  for (const bad of ['2024-05-01T09:30:00', '2024-05-01 09:30:00Z', '2024-02-30T00:00:00Z', '2024-05-01T24:00:00Z', '2024-05-01T09:60:00Z', '2024-05-01T09:30:00+2:00', '2024-05-01']) {
    t.equal(check(def, bad).length, 1, bad)
  }
  t.match(check(def, 'yesterday')[0], /^f: must be a date-time with an offset/)
})

t.test('email, url, slug, color', async t => {
  t.strictSame(check({ field_type: 'email' }, 'ada@example.com'), [])
  t.strictSame(check({ field_type: 'email' }, 'a.b+c@mail.example.org'), [])
  for (const bad of ['ada', 'ada@', '@example.com', 'ada@example', 'a b@example.com']) {
    t.strictSame(check({ field_type: 'email' }, bad), ['f: must be an email address'], bad)
  }
  t.strictSame(check({ field_type: 'url' }, 'https://example.com/a?b=1#c'), [])
  t.strictSame(check({ field_type: 'url' }, 'http://localhost:3000'), [])
  // What a write leaves of a public asset URL.
  t.strictSame(check({ field_type: 'url' }, '/api/assets/photos/x.png'), [])
  t.strictSame(check({ field_type: 'url' }, '/api/assets/x.png?_environment=staging'), [])
  for (const bad of ['/api/assets/', '/api/assets/../x.png', '/etc/passwd', 'x.png', 'ftp://example.com', 'example.com', 'https://', 'javascript:alert(1)', 'https://exa mple.com']) {
    t.strictSame(check({ field_type: 'url' }, bad), ['f: must be an absolute http(s) URL or an asset path (/api/assets/...)'], bad)
  }
  t.strictSame(check({ field_type: 'slug' }, 'hello-world-2'), [])
  for (const bad of ['Hello', 'a--b', '-a', 'a_b', 'a'.repeat(201)]) {
    t.strictSame(check({ field_type: 'slug' }, bad), ['f: must be a slug (lowercase letters, digits and hyphens)'], bad.slice(0, 20))
  }
  t.strictSame(check({ field_type: 'color' }, '#A0b1C2'), [])
  for (const bad of ['red', '#abc', '#abcdefa', 'a0b1c2']) t.strictSame(check({ field_type: 'color' }, bad), ['f: must be a color (#rrggbb)'], bad)
})

t.test('select and multiselect', async t => {
  const tag: FieldDefinition = { field_type: 'select', options: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'] }
  t.strictSame(check(tag, 'h2'), [])
  t.strictSame(check(tag, 'h7'), ['f: must be one of h1, h2, h3, h4, h5, h6'])
  const numeric: FieldDefinition = { field_type: 'select', options: [0, 0.5, 1] }
  t.strictSame(check(numeric, 0.5), [])
  t.strictSame(check(numeric, '0.5'), ['f: must be one of 0, 0.5, 1'], 'no coercion between strings and numbers')
  const tags: FieldDefinition = { field_type: 'multiselect', options: ['a', 'b', 'c'], min_items: 1, max_items: 2 }
  t.strictSame(check(tags, ['a', 'c']), [])
  t.strictSame(check(tags, []), ['f: must have at least 1 items'])
  t.strictSame(check(tags, ['a', 'b', 'c']), ['f: must have at most 2 items'])
  t.strictSame(check(tags, ['a', 'x']), ['f[1]: must be one of a, b, c'])
  t.strictSame(check(tags, ['a', 'a']), ['f: must not contain duplicates'])
  t.strictSame(check(tags, 'a'), ['f: must be a list of options'], 'a lone value is only accepted after normalize')
})

t.test('reference: a slug, or with multiple a list of slugs', async t => {
  const one: FieldDefinition = { field_type: 'reference', collection: 'author' }
  t.strictSame(check(one, 'ada-lovelace'), [])
  t.strictSame(check(one, 'Ada Lovelace'), ['f: must be an entry slug'])
  t.strictSame(check(one, { _slug: 'ada' }), ['f: must be an entry slug'], 'objects are reduced by normalize, not accepted raw')
  const many: FieldDefinition = { field_type: 'reference', collection: 'category', multiple: true, min_items: 1, max_items: 2 }
  t.strictSame(check(many, ['news', 'engineering']), [])
  t.strictSame(check(many, []), ['f: must have at least 1 items'])
  t.strictSame(check(many, ['a', 'b', 'c']), ['f: must have at most 2 items'])
  t.strictSame(check(many, ['a', 'B!']), ['f[1]: must be an entry slug'])
  t.strictSame(check(many, 'news'), ['f: must be a list of entry slugs'])
})

t.test('asset: a relative /api/assets/ path or an absolute http(s) URL', async t => {
  const def: FieldDefinition = { field_type: 'asset', accept: 'image/*' }
  for (const ok of ['/api/assets/cover.jpg', '/api/assets/blog/2024/cover.jpg', '/api/assets/a.png?_environment=staging', 'https://cdn.example.com/a.png']) {
    t.strictSame(check(def, ok), [], ok)
  }
  for (const bad of ['cover.jpg', '/api/assets/', '/api/assets/../secret', '/api/assets/a\\b', '/api/assets/a//b', '/etc/passwd', 'file:///etc/passwd']) {
    t.strictSame(check(def, bad), ['f: must be an asset path (/api/assets/...) or an absolute http(s) URL'], bad)
  }
})

t.test('object, array and json', async t => {
  const layout: FieldDefinition = { field_type: 'object', fields: { mobile: { field_type: 'select', options: ['1', '12'], required: true } } }
  t.strictSame(check(layout, { mobile: '12' }), [])
  t.strictSame(check(layout, { mobile: '5' }), ['f.mobile: must be one of 1, 12'])
  t.strictSame(check(layout, {}), ['f.mobile: is required'])
  t.strictSame(check(layout, 'wide'), ['f: must be an object'])
  const gallery: FieldDefinition = { field_type: 'array', max_items: 3, items: { field_type: 'object', fields: { caption: { field_type: 'string', max_length: 3 } } } }
  t.strictSame(check(gallery, [{ caption: 'ok' }, {}, { caption: 'too long' }]), ['f[2].caption: must be at most 3 characters'])
  t.strictSame(check(gallery, [{}, {}, {}, {}]), ['f: must have at most 3 items'])
  t.strictSame(check(gallery, {}), ['f: must be a list'])
  t.strictSame(check({ field_type: 'array', items: { field_type: 'integer' } }, [1, 'x']), ['f[1]: must be an integer'])
  for (const anything of [1, 'x', [1], { a: { b: null } }, true]) t.strictSame(check({ field_type: 'json' }, anything), [])
})

t.test('required: present and non-empty; null, blank strings and empty lists count as missing', async t => {
  const m = model({
    title: { field_type: 'string', required: true, min_length: 3 },
    tags: { field_type: 'multiselect', options: ['a'], required: true },
    meta: { field_type: 'json', required: true },
    flag: { field_type: 'boolean', required: true },
    n: { field_type: 'integer', required: true }
  })
  t.strictSame(m.validate({}), ['title: is required', 'tags: is required', 'meta: is required', 'flag: is required', 'n: is required'])
  t.strictSame(m.validate({ title: null, tags: [], meta: '', flag: false, n: 0 }), ['title: is required', 'tags: is required', 'meta: is required'],
    'false and 0 are values')
  t.strictSame(m.validate({ title: '   ', tags: ['a'], meta: {}, flag: true, n: 1 }), ['title: is required'], 'a blank string is missing; {} is a value')
  t.strictSame(m.validate({ title: 'ab', tags: ['a'], meta: [1], flag: true, n: 1 }), ['title: must be at least 3 characters'])
})

t.test('optional fields accept null (a cleared value)', async t => {
  const m = model({ a: { field_type: 'string' }, b: { field_type: 'select', options: ['x'] }, c: { field_type: 'object', fields: {} }, d: { field_type: 'reference', collection: 'x', multiple: true } })
  t.strictSame(m.validate({ a: null, b: null, c: null, d: null }), [])
})

t.test('strict: unknown fields are rejected by name, at every depth', async t => {
  const fields: Record<string, FieldDefinition> = { title: { field_type: 'string' }, layout: { field_type: 'object', fields: { mobile: { field_type: 'string' } } } }
  const strict = model(fields, { strict: true })
  t.strictSame(strict.validate({ title: 'x', colour: 'red', layout: { mobile: '1', tv: '3' } }), [
    'colour: is not a field of this schema (the schema is strict)',
    'layout.tv: is not a field of this schema (the schema is strict)'
  ])
  t.strictSame(model(fields).validate({ title: 'x', colour: 'red', layout: { tv: 3 } }), [], 'not strict: unknown fields pass')
})

t.test('every error of an entry, each with its field path', async t => {
  const schema = fromJsonSchema({
    type: 'object',
    required: ['_slug', 'internal', 'text', 'tag'],
    properties: {
      _slug: { type: 'string' },
      internal: { type: 'string' },
      text: { type: 'string' },
      tag: { type: 'string', enum: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'], default: 'h2' },
      layout: { type: 'object', properties: { mobile: { type: 'string', enum: ['1', '12'] }, spaceBottom: { type: 'number', enum: [0, 0.5] } }, required: ['mobile'] }
    }
  }, 'headline').definition as unknown as SchemaDefinition
  const m = compileCollection(resolved(schema))
  t.strictSame(m.validate({ text: 5, tag: 'h9', layout: { spaceBottom: 3 } }), [
    'internal: is required',
    'text: must be a string',
    'tag: must be one of h1, h2, h3, h4, h5, h6',
    'layout.mobile: is required',
    'layout.spaceBottom: must be one of 0, 0.5'
  ])
  t.strictSame(m.validate('nope' as unknown as Record<string, unknown>), ['(entry): must be an object'])
})

t.test('applyDefaults: defaults and auto values at every depth, on a copy', async t => {
  const m = model({
    tag: { field_type: 'select', options: ['h1', 'h2'], default: 'h2' },
    featured: { field_type: 'boolean', default: false },
    id: { field_type: 'string', auto: 'uuid' },
    created: { field_type: 'datetime', auto: 'now' },
    stamp: { field_type: 'string', auto: 'now' },
    tags: { field_type: 'multiselect', options: ['a', 'b'], default: ['a'] },
    layout: {
      field_type: 'object',
      fields: {
        mobile: { field_type: 'string', default: '12' },
        inner: { field_type: 'object', fields: { deep: { field_type: 'integer', default: 7 } } }
      }
    },
    withDefault: { field_type: 'object', default: {}, fields: { x: { field_type: 'string', default: 'filled' } } },
    absentObject: { field_type: 'object', fields: { y: { field_type: 'string', default: 'never' } } },
    gallery: { field_type: 'array', items: { field_type: 'object', fields: { alt: { field_type: 'string', default: '' } } } }
  })
  const input = { tag: null, layout: { inner: {} }, gallery: [{}, { alt: 'kept' }, 'not an object'] }
  const out = m.applyDefaults(input)
  t.equal(out.tag, 'h2', 'null counts as absent')
  t.equal(out.featured, false)
  t.match(out.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  t.strictSame(m.validate({ created: out.created }), [], 'auto now is a valid datetime')
  t.type(out.stamp, 'string')
  t.strictSame(out.tags, ['a'])
  t.strictSame(out.layout, { mobile: '12', inner: { deep: 7 } }, 'nested objects present in the body get their defaults')
  t.strictSame(out.withDefault, { x: 'filled' }, 'an object default is itself defaulted')
  t.notOk('absentObject' in out, 'an absent object without a default stays absent')
  t.strictSame(out.gallery, [{ alt: '' }, { alt: 'kept' }, 'not an object'], 'array items that are objects get defaults')
  t.strictSame(input, { tag: null, layout: { inner: {} }, gallery: [{}, { alt: 'kept' }, 'not an object'] }, 'the input is not changed')
  const again = m.applyDefaults({})
  t.not(again.id, out.id, 'a new uuid each time')
  ;(again.tags as string[]).push('b')
  t.strictSame(m.applyDefaults({}).tags, ['a'], 'defaults are copied, never shared')
  t.equal(m.applyDefaults({ id: 'given', featured: true }).id, 'given', 'auto only when absent')
})

t.test('normalize: multiselect and references', async t => {
  const m = model({
    tags: { field_type: 'multiselect', options: ['a', 'b', 'c'] },
    nums: { field_type: 'multiselect', options: [3, 1, 2] },
    author: { field_type: 'reference', collection: 'author' },
    categories: { field_type: 'reference', collection: 'category', multiple: true },
    meta: { field_type: 'object', fields: { topics: { field_type: 'multiselect', options: ['x', 'y'] }, editor: { field_type: 'reference', collection: 'author' } } },
    rows: { field_type: 'array', items: { field_type: 'object', fields: { marks: { field_type: 'multiselect', options: ['p', 'q'] } } } }
  })
  const input = {
    tags: ['c', 'a', 'c', 'b'],
    nums: [2, 3, 2],
    author: { _slug: 'ada', name: 'Ada' },
    categories: [{ _slug: 'news' }, 'tech', { _slug: 'news' }],
    meta: { topics: 'y', editor: { _slug: 'alan' } },
    rows: [{ marks: 'q' }, { marks: ['q', 'p'] }],
    other: ['untouched']
  }
  const out = m.normalize(input)
  t.strictSame(out.tags, ['a', 'b', 'c'], 'duplicates removed, ordered as in options')
  t.strictSame(out.nums, [3, 2])
  t.equal(out.author, 'ada', 'a single reference given as an object becomes its slug')
  t.strictSame(out.categories, ['news', 'tech'], 'reference arrays of objects become slugs, duplicates removed')
  t.strictSame(out.meta, { topics: ['y'], editor: 'alan' }, 'a lone value becomes a one-item array, at depth')
  t.strictSame(out.rows, [{ marks: ['q'] }, { marks: ['p', 'q'] }], 'inside array items too')
  t.strictSame(out.other, ['untouched'])
  t.strictSame(input.tags, ['c', 'a', 'c', 'b'], 'the input is not changed')
  t.strictSame(m.normalize({ tags: ['zzz', 'b'] }).tags, ['b', 'zzz'], 'values that are not options go last (and fail validation)')
  t.strictSame(m.normalize({ categories: 'solo' }).categories, ['solo'], 'a lone slug of a multiple reference becomes a list')
  t.strictSame(m.normalize({ tags: null, author: null }), { tags: null, author: null }, 'null is left alone')
  t.strictSame(m.validate(out), [])
})

t.test('readonlyViolations, keptOnUpdate, uniqueFields, referenceFields', async t => {
  const m = model({
    code: { field_type: 'string', readonly: true, unique: true },
    id: { field_type: 'string', auto: 'uuid' },
    email: { field_type: 'email', unique: true },
    author: { field_type: 'reference', collection: 'author' },
    categories: { field_type: 'reference', collection: 'category', multiple: true },
    meta: {
      field_type: 'object',
      fields: {
        origin: { field_type: 'object', readonly: true, fields: { system: { field_type: 'string' } } },
        sku: { field_type: 'string', unique: true, readonly: true },
        editor: { field_type: 'reference', collection: 'author' }
      }
    }
  })
  t.strictSame(m.uniqueFields, ['code', 'email', 'meta.sku'])
  t.strictSame(m.keptOnUpdate, ['code', 'id', 'meta.origin', 'meta.sku'])
  t.strictSame(m.referenceFields, [
    { path: 'author', collection: 'author', multiple: false },
    { path: 'categories', collection: 'category', multiple: true },
    { path: 'meta.editor', collection: 'author', multiple: false }
  ])
  const stored = { code: 'A1', meta: { origin: { system: 'x' }, sku: 'S' } }
  t.strictSame(m.readonlyViolations(stored, { code: 'A1', meta: { origin: { system: 'x' }, sku: 'S' } }), [], 'unchanged')
  t.strictSame(m.readonlyViolations(stored, {}), [], 'absent: kept, not changed')
  t.strictSame(m.readonlyViolations(stored, { code: 'B2', meta: { origin: { system: 'y' }, sku: 'S' } }), [
    'code: is read-only and cannot be changed',
    'meta.origin: is read-only and cannot be changed'
  ])
  t.strictSame(m.readonlyViolations({}, { code: 'new' }), ['code: is read-only and cannot be changed'], 'setting a never-set readonly field is a change')
})

t.test('a model is compiled once and validation is fast', async t => {
  const m = model({
    title: { field_type: 'string', required: true, max_length: 200 },
    tags: { field_type: 'multiselect', options: ['a', 'b', 'c'] },
    at: { field_type: 'datetime' },
    layout: { field_type: 'object', fields: { mobile: { field_type: 'select', options: ['1', '12'] } } }
  }, { strict: true })
  const entry = { title: 'Hello', tags: ['a'], at: '2024-05-01T09:30:00Z', layout: { mobile: '12' } }
  const start = process.hrtime.bigint()
  for (let i = 0; i < 20000; i++) m.validate(entry)
  const perCallMicros = Number(process.hrtime.bigint() - start) / 1000 / 20000
  t.ok(perCallMicros < 50, `validate takes ${perCallMicros.toFixed(2)} µs per entry`)
})

t.test('fields named after Object.prototype members are read as own properties', async t => {
  // Built from entries: TypeScript types an object literal's `constructor` key as Object's.
  const m = model(Object.fromEntries<FieldDefinition>([
    ['constructor', { field_type: 'string' }],
    ['toString', { field_type: 'string', required: true }],
    ['valueOf', { field_type: 'integer', default: 1 }],
    ['hasOwnProperty', { field_type: 'string', readonly: true }]
  ]))
  t.strictSame(m.validate({ toString: 'x' }), [], 'an absent constructor is absent')
  t.strictSame(m.validate({}), ['toString: is required'])
  t.strictSame(m.applyDefaults({}), { valueOf: 1 })
  t.strictSame(m.readonlyViolations({ hasOwnProperty: 'a' }, {}), [], 'an absent readonly field is not a change')
  t.strictSame(m.readonlyViolations({}, { hasOwnProperty: 'a' }), ['hasOwnProperty: is read-only and cannot be changed'])
})
