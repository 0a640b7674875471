import t from 'tap'
import { checkReferences, type ReferenceTargets } from '../../../lib/references/check.js'
import { compilePlan } from '../../../lib/references/plan.js'
import type { FieldDefinition } from '../../../types/schema.js'
import { Entries, SCOPE, entry } from './fakes.js'

const fields: Record<string, FieldDefinition> = {
  author: { field_type: 'reference', collection: 'authors' },
  tags: { field_type: 'reference', collection: 'tags', multiple: true },
  seo: { field_type: 'object', fields: { by: { field_type: 'reference', collection: 'authors' } } },
  blocks: { field_type: 'array', items: { field_type: 'object', fields: { quoted: { field_type: 'reference', collection: 'authors' } } } },
  ghost: { field_type: 'reference', collection: 'nowhere' }
}
const plan = compilePlan(fields)

function targets (entries: Entries): ReferenceTargets {
  return { hasCollection: c => c !== 'nowhere', getMany: entries.getMany }
}

t.test('every target exists: no message, one batched read per target collection', async t => {
  const entries = new Entries()
    .put('authors', entry('jane', {})).put('authors', entry('joe', {}, 'draft'))
    .put('tags', entry('a', {})).put('tags', entry('b', {}))
  const messages = await checkReferences(plan, {
    author: 'jane', tags: ['a', 'b'], seo: { by: 'joe' }, blocks: [{ quoted: 'jane' }, { quoted: 'joe' }]
  }, SCOPE, targets(entries))
  t.same(messages, [], 'drafts are existing entries too')
  t.same(entries.reads.sort(), ['authors:jane,joe', 'tags:a,b'], 'one read per collection, each slug once')
})

t.test('one message per missing target, naming the field path and the slug', async t => {
  const entries = new Entries().put('authors', entry('jane', {})).put('tags', entry('a', {}))
  const messages = await checkReferences(plan, {
    author: 'nobody', tags: ['a', 'zz', 'yy'], seo: { by: 'nobody' }, blocks: [{ quoted: 'jane' }, { quoted: 'gone' }], ghost: 'x'
  }, SCOPE, targets(entries))
  t.same(messages, [
    "author: no 'authors' entry with the slug 'nobody'",
    "tags: no 'tags' entry with the slug 'zz'",
    "tags: no 'tags' entry with the slug 'yy'",
    "seo.by: no 'authors' entry with the slug 'nobody'",
    "blocks[1].quoted: no 'authors' entry with the slug 'gone'",
    "ghost: no 'nowhere' entry with the slug 'x' (no collection 'nowhere')"
  ])
  t.notOk(entries.reads.some(r => r.startsWith('nowhere')), 'an unknown collection is not read')
})

t.test('locale and environment are part of the lookup', async t => {
  const en = { environment: 'default', locale: 'en' }
  const de = { environment: 'default', locale: 'de' }
  const entries = new Entries().put('authors', entry('jane', {}), en)
  t.same(await checkReferences(plan, { author: 'jane' }, en, targets(entries)), [])
  t.same(await checkReferences(plan, { author: 'jane' }, de, targets(entries)), ["author: no 'authors' entry with the slug 'jane'"])
})

t.test('no references: nothing is read', async t => {
  const entries = new Entries()
  t.same(await checkReferences(plan, { author: null, tags: [] }, SCOPE, targets(entries)), [])
  t.same(entries.reads, [])
})
