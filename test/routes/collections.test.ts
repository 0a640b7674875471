import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { assertError, assertShape, build, tempDir } from '../helper.js'
import { CollectionsReply } from '../../routes/api/collections/schemas.js'
import { FieldDefinitionReply, ResolvedSchemaReply } from '../../routes/api/collections/_collection/schemas.js'

/** An app whose types directory holds `files` (an existing data dir: nothing is seeded). */
async function withTypes (t: Test, files: Record<string, unknown>): Promise<FastifyInstance> {
  const dataDir = path.join(tempDir(t), 'data')
  mkdirSync(path.join(dataDir, 'types'), { recursive: true })
  for (const [file, content] of Object.entries(files)) {
    writeFileSync(path.join(dataDir, 'types', file), typeof content === 'string' ? content : JSON.stringify(content))
  }
  return await build(t, {}, { dataDir })
}

t.test('GET /api/collections lists the example collections, reusable seo left out', async t => {
  const app = await build(t, { CMS_SEED: 'true' })
  const res = await app.inject({ method: 'GET', url: '/api/collections' })
  t.equal(res.statusCode, 200)
  const body = res.json()
  assertShape(t, CollectionsReply, body)
  t.strictSame(body.collections.map((c: { name: string }) => c.name), ['author', 'category', 'headline', 'post'])
  t.strictSame(body.collections.find((c: { name: string }) => c.name === 'post'), {
    name: 'post',
    label: 'Post',
    field_count: 13,
    extends: 'seo',
    strict: false,
    description: 'A blog article.',
    tags: ['blog'],
    category: 'Editorial'
  })
  t.strictSame(body.collections.find((c: { name: string }) => c.name === 'headline'), {
    name: 'headline',
    label: 'Headline',
    field_count: 5,
    extends: null,
    strict: false,
    description: 'A page headline with its layout in a 12-column grid.',
    tags: [],
    category: null
  })
})

t.test('summary label: the schema\'s label, or the name when it has none', async t => {
  const app = await withTypes(t, {
    'plain.json': { name: 'plain', fields: {} },
    'fancy.json': { name: 'fancy', label: 'Fancy things', fields: {} }
  })
  const body = (await app.inject({ method: 'GET', url: '/api/collections' })).json()
  assertShape(t, CollectionsReply, body)
  t.strictSame(body.collections.map((c: { name: string, label: string }) => [c.name, c.label]), [['fancy', 'Fancy things'], ['plain', 'plain']])
})

t.test('GET /api/collections: an empty types directory gives an empty list', async t => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/api/collections' })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), { collections: [] })
  assertShape(t, CollectionsReply, res.json())
})

t.test('summary: strict inherited, extends as a list, unresolvable schemas left out', async t => {
  const app = await withTypes(t, {
    'base.json': { name: 'base', reusable: true, strict: true, fields: { id: { field_type: 'string' } } },
    'extra.json': { name: 'extra', reusable: true, fields: { note: { field_type: 'text' } } },
    'page.json': { name: 'page', extends: ['base', 'extra'], fields: { title: { field_type: 'string' } } },
    'orphan.json': { name: 'orphan', extends: 'ghost', fields: {} },
    'broken.json': '{ "name": '
  })
  const res = await app.inject({ method: 'GET', url: '/api/collections' })
  assertShape(t, CollectionsReply, res.json())
  t.strictSame(res.json().collections, [{
    name: 'page', label: 'page', field_count: 3, extends: ['base', 'extra'], strict: true, description: null, tags: [], category: null
  }])
})

t.test('GET /api/collections/post: the resolved definition, seo fields first', async t => {
  const app = await build(t, { CMS_SEED: 'true' })
  const res = await app.inject({ method: 'GET', url: '/api/collections/post' })
  t.equal(res.statusCode, 200)
  const body = res.json()
  assertShape(t, ResolvedSchemaReply, body)
  t.equal(body.name, 'post')
  t.equal(body.extends, 'seo')
  t.equal(body.reusable, false)
  t.equal(body.display_field, 'title')
  t.equal(body.default_sort, 'published_at')
  t.equal(body.default_order, 'desc')
  t.strictSame(Object.keys(body.fields).slice(0, 4), ['meta_title', 'meta_description', 'og_image', 'title'])
  t.strictSame(body.fields.tags, { field_type: 'multiselect', label: 'Tags', options: ['announcement', 'tutorial', 'opinion', 'release', 'guide'] })
  for (const field of Object.values(body.fields)) assertShape(t, FieldDefinitionReply, field, 'each field definition has the contract shape')
})

t.test('GET /api/collections/headline: a JSON Schema file comes back converted', async t => {
  const app = await build(t, { CMS_SEED: 'true' })
  const res = await app.inject({ method: 'GET', url: '/api/collections/headline' })
  t.equal(res.statusCode, 200)
  const body = res.json()
  assertShape(t, ResolvedSchemaReply, body)
  t.equal(body.label, 'Headline')
  t.equal(body.strict, false)
  t.strictSame(Object.keys(body.fields), ['internal', 'text', 'tag', 'align', 'layout'])
  t.strictSame(body.fields.tag, { field_type: 'select', options: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'], default: 'h2', required: true })
  t.strictSame(body.fields.layout.fields.spaceBottom, {
    field_type: 'select', options: [0, 0.5, 1, 1.5, 2], default: 0, description: 'Space below, in rem'
  })
  t.strictSame(body.fields.layout.fields.mobile.required, true)
  assertShape(t, FieldDefinitionReply, body.fields.layout.fields.mobile)
})

t.test('GET /api/collections/<c>: unknown, reusable and unresolvable answer 404', async t => {
  const app = await withTypes(t, {
    'seo.json': { name: 'seo', reusable: true, fields: {} },
    'orphan.json': { name: 'orphan', extends: 'ghost', fields: {} },
    'typo.json': { name: 'typo', fields: { x: { field_type: 'nope' } } }
  })
  for (const name of ['nope', 'seo', 'orphan', 'typo', 'Bad%20Name', '..%2F..%2Fetc']) {
    const res = await app.inject({ method: 'GET', url: `/api/collections/${name}` })
    assertError(t, res, 404, 'NOT_FOUND')
  }
})
