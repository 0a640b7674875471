import t from 'tap'
import { resolvedProblems, resolveSchemas } from '../../../lib/schema/resolve.js'
import type { SchemaDefinition } from '../../../types/schema.js'

const defs = (...list: SchemaDefinition[]): Map<string, SchemaDefinition> => new Map(list.map(d => [d.name, d]))

t.test('a schema without parents resolves to itself with every property present', async t => {
  const { resolved, errors } = resolveSchemas(defs({ name: 'a', fields: { x: { field_type: 'string' } } }))
  t.equal(errors.size, 0)
  t.strictSame(resolved.get('a'), {
    name: 'a',
    label: null,
    description: null,
    extends: null,
    reusable: false,
    strict: false,
    tags: [],
    category: null,
    default_sort: null,
    default_order: null,
    display_field: null,
    fields: { x: { field_type: 'string' } }
  })
})

t.test('parents first in list order; a later parent and the child replace same-name fields', async t => {
  const { resolved, ancestors } = resolveSchemas(defs(
    { name: 'seo', reusable: true, fields: { meta: { field_type: 'string' }, shared: { field_type: 'string', label: 'from seo' } } },
    { name: 'dates', reusable: true, fields: { shared: { field_type: 'text', label: 'from dates' }, at: { field_type: 'datetime' } } },
    { name: 'post', extends: ['seo', 'dates'], fields: { title: { field_type: 'string' }, meta: { field_type: 'text', label: 'child' } } }
  ))
  const post = resolved.get('post')
  t.ok(post)
  t.strictSame(Object.keys(post?.fields ?? {}), ['meta', 'shared', 'at', 'title'], 'parent fields first, in list order')
  t.strictSame(post?.fields.meta, { field_type: 'text', label: 'child' }, 'the child replaces the parent field')
  t.strictSame(post?.fields.shared, { field_type: 'text', label: 'from dates' }, 'a later parent replaces an earlier one')
  t.strictSame(post?.extends, ['seo', 'dates'], 'extends is kept as written')
  t.equal(post?.reusable, false, 'reusable is not inherited')
  t.equal(resolved.get('seo')?.reusable, true)
  t.strictSame([...(ancestors.get('post') ?? [])].sort(), ['dates', 'seo'])
})

t.test('a string extends and a chain of parents', async t => {
  const { resolved, ancestors } = resolveSchemas(defs(
    { name: 'base', fields: { id: { field_type: 'string' } } },
    { name: 'mid', extends: 'base', fields: { m: { field_type: 'string' } } },
    { name: 'leaf', extends: 'mid', fields: { l: { field_type: 'string' } } }
  ))
  t.strictSame(Object.keys(resolved.get('leaf')?.fields ?? {}), ['id', 'm', 'l'])
  t.strictSame([...(ancestors.get('leaf') ?? [])].sort(), ['base', 'mid'], 'ancestors are transitive')
})

t.test('strict when any ancestor is strict', async t => {
  const { resolved } = resolveSchemas(defs(
    { name: 'base', strict: true, fields: {} },
    { name: 'mid', extends: 'base', strict: false, fields: {} },
    { name: 'leaf', extends: 'mid', fields: {} },
    { name: 'loose', fields: {} }
  ))
  t.equal(resolved.get('mid')?.strict, true)
  t.equal(resolved.get('leaf')?.strict, true)
  t.equal(resolved.get('loose')?.strict, false)
})

t.test('unknown parents, invalid parents and cycles are reported under extends', async t => {
  const { resolved, errors } = resolveSchemas(defs(
    { name: 'orphan', extends: 'ghost', fields: {} },
    { name: 'a', extends: 'b', fields: {} },
    { name: 'b', extends: ['c'], fields: {} },
    { name: 'c', extends: 'a', fields: {} },
    { name: 'self', extends: 'self', fields: {} },
    { name: 'child_of_cycle', extends: 'a', fields: {} },
    { name: 'child_of_orphan', extends: 'orphan', fields: {} },
    { name: 'uses_broken', extends: 'broken', fields: {} },
    { name: 'fine', fields: {} }
  ), new Set(['broken']))
  t.strictSame([...resolved.keys()], ['fine'])
  t.strictSame(errors.get('orphan'), ["extends: unknown schema 'ghost'"])
  t.strictSame(errors.get('a'), ['extends: cycle a → b → c → a'])
  t.strictSame(errors.get('b'), ['extends: cycle b → c → a → b'])
  t.strictSame(errors.get('c'), ['extends: cycle c → a → b → c'])
  t.strictSame(errors.get('self'), ['extends: cycle self → self'])
  t.strictSame(errors.get('child_of_cycle'), ["extends: schema 'a' cannot be resolved (extends: cycle a → b → c → a)"])
  t.strictSame(errors.get('child_of_orphan'), ["extends: schema 'orphan' cannot be resolved (extends: unknown schema 'ghost')"])
  t.strictSame(errors.get('uses_broken'), ["extends: schema 'broken' is not a valid schema"])
})

t.test('resolved fields are copies: resolving twice never shares objects with the parent', async t => {
  const seo: SchemaDefinition = { name: 'seo', fields: { meta: { field_type: 'string' } } }
  const { resolved } = resolveSchemas(defs(seo, { name: 'post', extends: 'seo', fields: {} }))
  t.not(resolved.get('post')?.fields.meta, seo.fields.meta)
})

t.test('default_sort and display_field must name a field of the resolved schema', async t => {
  const { resolved } = resolveSchemas(defs(
    { name: 'seo', fields: { meta_title: { field_type: 'string' } } },
    { name: 'ok', extends: 'seo', default_sort: 'meta_title', display_field: 'meta_title', fields: { o: { field_type: 'object', fields: { at: { field_type: 'date' } } } } },
    { name: 'nested', default_sort: 'o.at', fields: { o: { field_type: 'object', fields: { at: { field_type: 'date' } } } } },
    { name: 'system', default_sort: '_updated_at', display_field: '_slug', fields: {} },
    { name: 'bad', default_sort: 'nope', display_field: 'missing', fields: { j: { field_type: 'json' } } },
    { name: 'unsortable', default_sort: 'j', fields: { j: { field_type: 'json' } } }
  ))
  const problems = (name: string): string[] => resolvedProblems(resolved.get(name) as NonNullable<ReturnType<typeof resolved.get>>)
  t.strictSame(problems('ok'), [])
  t.strictSame(problems('nested'), [])
  t.strictSame(problems('system'), [])
  t.strictSame(problems('bad'), ["default_sort: 'nope' is not a field of this schema", "display_field: 'missing' is not a field of this schema"])
  t.strictSame(problems('unsortable'), ["default_sort: 'j' is a json field and cannot be sorted by"])
})
