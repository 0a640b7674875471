import t from 'tap'
import {
  EMPTY_PLAN, OMIT, compilePlan, findReferences, formatReference, formatReferences, mapReferences, planOf,
  type RefNode
} from '../../../lib/references/plan.js'
import { compileCollection } from '../../../lib/schema/compile.js'
import type { FieldDefinition, ResolvedSchema } from '../../../types/schema.js'

const fields: Record<string, FieldDefinition> = {
  title: { field_type: 'string' },
  author: { field_type: 'reference', collection: 'authors' },
  tags: { field_type: 'reference', collection: 'tags', multiple: true },
  seo: { field_type: 'object', fields: { title: { field_type: 'string' }, image_by: { field_type: 'reference', collection: 'authors' } } },
  meta: { field_type: 'object', fields: { note: { field_type: 'string' } } },
  blocks: { field_type: 'array', items: { field_type: 'object', fields: { text: { field_type: 'string' }, quoted: { field_type: 'reference', collection: 'authors' } } } },
  related: { field_type: 'array', items: { field_type: 'reference', collection: 'posts' } },
  names: { field_type: 'array', items: { field_type: 'string' } }
}

function deepFreeze<T> (value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}

t.test('compilePlan keeps only the branches that lead to references, arrays included', async t => {
  const plan = compilePlan(fields)
  t.same([...plan.fields.keys()], ['author', 'tags', 'seo', 'blocks', 'related'])
  t.same(plan.refs.map(r => [r.field, r.collection, r.multiple]), [
    ['author', 'authors', false],
    ['tags', 'tags', true],
    ['seo.image_by', 'authors', false],
    ['blocks.quoted', 'authors', false],
    ['related', 'posts', false]
  ])
  t.same([...plan.paths], ['author', 'tags', 'seo.image_by', 'blocks.quoted', 'related'])
  t.equal(compilePlan({ title: { field_type: 'string' } }), EMPTY_PLAN, 'no references: the shared empty plan')
})

t.test('planOf compiles once per model and follows the compiled model', async t => {
  const schema: ResolvedSchema = { name: 'posts', fields, reusable: false, strict: false, extends: null }
  const model = compileCollection(schema)
  const plan = planOf(model)
  t.equal(planOf(model), plan, 'cached per model')
  t.same([...plan.paths], ['author', 'tags', 'seo.image_by', 'blocks.quoted', 'related'])
  t.same(model.normalize({ tags: [{ _slug: 'a' }, 'b', 'a'], author: { _slug: 'jane' } }), { tags: ['a', 'b'], author: 'jane' },
    'the compiled model reduces objects with _slug to slugs (interface.md References)')
})

t.test('findReferences lists every slug with where it is', async t => {
  const plan = compilePlan(fields)
  const found = findReferences(plan, {
    title: 'x',
    author: 'jane',
    tags: ['a', 'b'],
    seo: { image_by: 'joe' },
    blocks: [{ text: 'no ref' }, { quoted: 'ann' }],
    related: ['p1', 'p2'],
    names: ['jane']
  })
  t.same(found.map(f => [f.path, f.node.field, f.slug]), [
    ['author', 'author', 'jane'],
    ['tags', 'tags', 'a'],
    ['tags', 'tags', 'b'],
    ['seo.image_by', 'seo.image_by', 'joe'],
    ['blocks[1].quoted', 'blocks.quoted', 'ann'],
    ['related[0]', 'related', 'p1'],
    ['related[1]', 'related', 'p2']
  ])
  t.same(findReferences(plan, { author: null, tags: null, seo: 'not an object', blocks: 'nope' }), [], 'nulls and odd shapes are skipped')
  t.same(findReferences(EMPTY_PLAN, { author: 'x' }), [])
})

t.test('mapReferences copies on write and never touches its input', async t => {
  const plan = compilePlan(fields)
  const data = deepFreeze({ title: 'x', author: 'jane', seo: { title: 's', image_by: 'joe' }, blocks: [{ quoted: 'ann' }, { text: 't' }], meta: { note: 'n' } })
  t.equal(mapReferences(plan, data, (_node, value) => value), data, 'unchanged: the same object')
  const upper = mapReferences(plan, data, (_node, value) => typeof value === 'string' ? value.toUpperCase() : value)
  t.same(upper, { title: 'x', author: 'JANE', seo: { title: 's', image_by: 'JOE' }, blocks: [{ quoted: 'ANN' }, { text: 't' }], meta: { note: 'n' } })
  t.equal(upper.meta, data.meta, 'untouched branches are shared')
  t.equal((upper.blocks as unknown[])[1], data.blocks[1])

  const omitted = mapReferences(plan, deepFreeze({ author: 'x', related: ['p1', 'gone', 'p2'] }), (node: RefNode, value) => value === 'gone' || node.field === 'author' ? OMIT : value)
  t.same(omitted, { author: null, related: ['p1', 'p2'] }, 'OMIT drops an array item, and is null for a field')

  const proto = JSON.parse('{"__proto__": {"x": 1}, "author": "a"}') as Record<string, unknown>
  const mapped = mapReferences(plan, proto, () => 'b')
  t.ok(Object.hasOwn(mapped, '__proto__'), 'a __proto__ key stays an own property')
  t.equal(Object.getPrototypeOf(mapped), Object.prototype)
})

t.test('formatReference: per schema, single or multiple', async t => {
  const single: RefNode = { kind: 'ref', field: 'a', collection: 'c', multiple: false }
  const multiple: RefNode = { ...single, multiple: true }
  t.equal(formatReference(single, 'x'), 'x')
  t.equal(formatReference(single, ['x', 'y']), 'x', 'stored as an array before the field became single')
  t.equal(formatReference(single, []), null)
  t.equal(formatReference(single, { _slug: 'x' }), 'x')
  t.equal(formatReference(single, null), null)
  const arr = ['x', 'y']
  t.equal(formatReference(multiple, arr), arr, 'already formatted: the same array')
  t.same(formatReference(multiple, 'x'), ['x'], 'a lone slug stored before the field became multiple')
  t.same(formatReference(multiple, [{ _slug: 'x' }, 'y']), ['x', 'y'])
  t.equal(formatReference(multiple, null), null)

  const plan = compilePlan(fields)
  const data = deepFreeze({ author: ['a'], tags: 'b', title: 't' })
  t.same(formatReferences(plan, data), { author: 'a', tags: ['b'], title: 't' })
  const ok = deepFreeze({ author: 'a', tags: ['b'] })
  t.equal(formatReferences(plan, ok), ok)
})
