import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { ADMIN_KEY, EDITOR_KEY, KEYS_ENV, VIEWER_KEY, assertError, assertShape, auth, build, eachStore, tempDir, type Env } from '../helper.js'
import { SchemaDefinitionBody, SchemaNamesReply } from '../../routes/api/schemas/schemas.js'
import { RawSchemaReply } from '../../routes/api/schemas/_name/raw/schemas.js'
import { ResolvedSchemaReply } from '../../routes/api/collections/_collection/schemas.js'
import type { CmsEvent } from '../../types/events.js'

interface Setup { app: FastifyInstance, types: string, events: CmsEvent[] }

/** An app whose types directory holds `files`; every event emitted is recorded. */
async function setup (t: Test, files: Record<string, unknown> = {}, env: Env = {}): Promise<Setup> {
  const dataDir = path.join(tempDir(t), 'data')
  const types = path.join(dataDir, 'types')
  mkdirSync(types, { recursive: true })
  for (const [file, content] of Object.entries(files)) {
    writeFileSync(path.join(types, file), typeof content === 'string' ? content : JSON.stringify(content, null, 2))
  }
  const app = await build(t, env, { dataDir })
  const events: CmsEvent[] = []
  app.events.on(event => { events.push(event) })
  return { app, types, events }
}

const seo = { name: 'seo', reusable: true, fields: { meta_title: { field_type: 'string', max_length: 70 } } }
const post = {
  name: 'post',
  label: 'Post',
  extends: 'seo',
  default_sort: 'published_at',
  fields: {
    title: { field_type: 'string', required: true },
    published_at: { field_type: 'datetime' }
  }
}
const fileOf = (types: string, name: string): string => readFileSync(path.join(types, name), 'utf8')

t.test('GET /api/schemas lists every schema, reusable ones included', async t => {
  const { app } = await setup(t, { 'seo.json': seo, 'post.json5': `// c\n${JSON.stringify(post)}`, 'broken.json': '{' })
  const res = await app.inject({ method: 'GET', url: '/api/schemas' })
  t.equal(res.statusCode, 200)
  assertShape(t, SchemaNamesReply, res.json())
  t.strictSame(res.json(), { names: ['post', 'seo'] })
})

t.test('GET /api/schemas/<name>/raw: as stored, .json5 first', async t => {
  const headline = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { _slug: { type: 'string' }, text: { type: 'string' } }, additionalProperties: true }
  const { app } = await setup(t, {
    'seo.json': seo,
    'post.json': { ...post, label: 'from json' },
    'post.json5': '// the one in use\n{ name: \'post\', label: \'from json5\', extends: \'seo\', fields: { title: { field_type: \'string\' } }, }',
    'headline.json': headline,
    'broken.json5': '{ name: ',
    'renamed.json': { name: 'other', fields: {} }
  })
  const raw = await app.inject({ method: 'GET', url: '/api/schemas/post/raw' })
  t.equal(raw.statusCode, 200)
  assertShape(t, RawSchemaReply, raw.json())
  t.strictSame(raw.json(), { name: 'post', label: 'from json5', extends: 'seo', fields: { title: { field_type: 'string' } } }, 'unresolved: own fields and extends')

  const seoRaw = await app.inject({ method: 'GET', url: '/api/schemas/seo/raw' })
  t.strictSame(seoRaw.json(), seo, 'a reusable schema too')

  const js = await app.inject({ method: 'GET', url: '/api/schemas/headline/raw' })
  t.equal(js.statusCode, 200)
  assertShape(t, RawSchemaReply, js.json())
  t.strictSame(js.json(), headline, 'JSON Schema notation as stored')

  assertError(t, await app.inject({ method: 'GET', url: '/api/schemas/nope/raw' }), 404, 'NOT_FOUND')
  assertError(t, await app.inject({ method: 'GET', url: '/api/schemas/broken/raw' }), 400, 'BAD_REQUEST')
  assertError(t, await app.inject({ method: 'GET', url: '/api/schemas/renamed/raw' }), 400, 'BAD_REQUEST')
  assertError(t, await app.inject({ method: 'GET', url: '/api/schemas/..%2F..%2Fpackage/raw' }), 400, 'BAD_REQUEST')
})

t.test('POST /api/schemas: 201, pretty-printed <name>.json, registry reloaded, schema.created emitted', async t => {
  const { app, types, events } = await setup(t, { 'seo.json': seo })
  const res = await app.inject({ method: 'POST', url: '/api/schemas', payload: post })
  t.equal(res.statusCode, 201)
  assertShape(t, SchemaDefinitionBody, res.json())
  t.strictSame(res.json(), post, 'the definition as written')
  t.equal(fileOf(types, 'post.json'), `${JSON.stringify(post, null, 2)}\n`, 'pretty-printed with 2 spaces and a trailing newline')
  t.strictSame(events, [{ event: 'schema.created', name: 'post' }])

  const resolved = await app.inject({ method: 'GET', url: '/api/collections/post' })
  t.equal(resolved.statusCode, 200, 'the new collection is served at once')
  assertShape(t, ResolvedSchemaReply, resolved.json())
  t.strictSame(Object.keys(resolved.json().fields), ['meta_title', 'title', 'published_at'])
  t.ok(app.schemas.collection('post'), 'a compiled model is ready for the content pipeline')
  t.strictSame((await app.inject({ method: 'GET', url: '/api/schemas' })).json().names, ['post', 'seo'])
})

t.test('POST /api/schemas: rules 2, 3 and 4, conflicts and resolution, nothing written or emitted on failure', async t => {
  const { app, types, events } = await setup(t, { 'seo.json': seo })
  const post400 = async (payload: unknown): Promise<void> => {
    assertError(t, await app.inject({ method: 'POST', url: '/api/schemas', payload: payload as object }), 400, 'BAD_REQUEST')
  }
  // Rule 2: the name.
  await post400({ name: 'Post', fields: {} })
  await post400({ name: 'blog-post', fields: {} })
  await post400({ name: '', fields: {} })
  await post400({ name: 'a'.repeat(65), fields: {} })
  await post400({ name: '../evil', fields: {} })
  // Rule 3: reusable on create, even with bad fields (rule 3 comes before rule 4).
  await post400({ name: 'partial', reusable: true, fields: { x: { field_type: 'nope' } } })
  // Outer shape and malformed JSON.
  await post400({ fields: {} })
  assertError(t, await app.inject({ method: 'POST', url: '/api/schemas', headers: { 'content-type': 'application/json' }, payload: '{"name": ' }), 400, 'BAD_REQUEST')
  assertError(t, await app.inject({ method: 'POST', url: '/api/schemas', headers: { 'content-type': 'text/plain' }, payload: 'name=post' }), 415, 'UNSUPPORTED_MEDIA_TYPE')

  // Rule 4: one message per offending field, naming the field and the unknown type.
  const bad = await app.inject({
    method: 'POST',
    url: '/api/schemas',
    payload: { name: 'post', fields: { title: { field_type: 'strin' }, body: { field_type: 'markdown' }, when: { field_type: 'timestamp' } } }
  })
  assertError(t, bad, 422, 'VALIDATION_FAILED')
  t.strictSame(bad.json().errors, ['title: unknown field type "strin"', 'when: unknown field type "timestamp"'])

  const attrs = await app.inject({
    method: 'POST',
    url: '/api/schemas',
    payload: { name: 'post', fields: { title: { field_type: 'string', options: ['a'] }, n: { field_type: 'number', min: 5, max: 1 } } }
  })
  assertError(t, attrs, 422, 'VALIDATION_FAILED')
  t.strictSame(attrs.json().errors, ["title: attribute 'options' is not allowed on a string field", 'n: min (5) must not be greater than max (1)'])

  // Contract §5: an attribute of the wrong type is a 422 naming it, as sent: nothing is coerced
  // ("true" is not true, "a" is not ["a"]). A name that is not a string is still rule 2's 400.
  const typed = [
    [{ strict: 'true' }, 'strict: must be true or false'],
    [{ reusable: 'false' }, 'reusable: must be true or false'],
    [{ tags: 'a' }, 'tags: must be a list of strings'],
    [{ label: 5 }, 'label: must be a string or null']
  ] as const
  for (const [attribute, message] of typed) {
    for (const method of ['POST', 'PUT'] as const) {
      const url = method === 'POST' ? '/api/schemas' : '/api/schemas/seo'
      const res = await app.inject({ method, url, payload: { name: method === 'POST' ? 'post' : 'seo', fields: {}, ...attribute } })
      assertError(t, res, 422, 'VALIDATION_FAILED')
      t.strictSame(res.json().errors, [message], `${method}: ${message}`)
    }
  }
  await post400({ name: 5, fields: {} })

  const orphan = await app.inject({ method: 'POST', url: '/api/schemas', payload: { name: 'post', extends: 'ghost', fields: {} } })
  assertError(t, orphan, 422, 'VALIDATION_FAILED')
  t.strictSame(orphan.json().errors, ["extends: unknown schema 'ghost'"])

  assertError(t, await app.inject({ method: 'POST', url: '/api/schemas', payload: { ...seo, reusable: false } }), 409, 'CONFLICT')

  t.strictSame(readdirSync(types), ['seo.json'], 'nothing written')
  t.strictSame(events, [], 'no event for a failed write')
})

t.test('PUT /api/schemas/<name>: 200, rewrites the existing file, recompiles children, schema.updated emitted', async t => {
  const { app, types, events } = await setup(t, {
    'seo.json5': `// SEO partial\n${JSON.stringify(seo)}`,
    'post.json': post
  })
  const next = { ...seo, fields: { ...seo.fields, canonical: { field_type: 'url' } } }
  const res = await app.inject({ method: 'PUT', url: '/api/schemas/seo', payload: next })
  t.equal(res.statusCode, 200)
  assertShape(t, SchemaDefinitionBody, res.json())
  t.strictSame(res.json(), next)
  t.equal(fileOf(types, 'seo.json5'), `${JSON.stringify(next, null, 2)}\n`, 'the .json5 file is the one rewritten')
  t.notOk(existsSync(path.join(types, 'seo.json')), 'no .json file appears')
  t.strictSame(events, [{ event: 'schema.updated', name: 'seo' }])
  const child = await app.inject({ method: 'GET', url: '/api/collections/post' })
  t.strictSame(Object.keys(child.json().fields), ['meta_title', 'canonical', 'title', 'published_at'], 'the child sees the new parent field')
  t.strictSame(app.schemas.collection('post')?.validate({ title: 'x', canonical: 'not a url' }), ['canonical: must be an absolute http(s) URL or an asset path (/api/assets/...)'])
})

t.test('PUT /api/schemas/<name>: rules 2, 4, 5 and 6 in order; cycles are 422 naming extends', async t => {
  const { app, events } = await setup(t, { 'seo.json': seo, 'post.json': post })
  const put = async (name: string, payload: unknown): Promise<Awaited<ReturnType<FastifyInstance['inject']>>> =>
    await app.inject({ method: 'PUT', url: `/api/schemas/${name}`, payload: payload as object })
  assertError(t, await put('post', { ...post, name: 'Post' }), 400, 'BAD_REQUEST')
  const typo = await put('post', { ...post, name: 'other', fields: { x: { field_type: 'nope' } } })
  assertError(t, typo, 422, 'VALIDATION_FAILED')
  t.strictSame(typo.json().errors, ['x: unknown field type "nope"'], 'rule 4 comes before rule 5')
  assertError(t, await put('post', { ...post, name: 'page' }), 400, 'BAD_REQUEST')
  assertError(t, await put('page', { ...post, name: 'page' }), 404, 'NOT_FOUND')
  const cycle = await put('seo', { ...seo, extends: 'post' })
  assertError(t, cycle, 422, 'VALIDATION_FAILED')
  t.strictSame(cycle.json().errors, ['extends: cycle seo → post → seo'])
  t.strictSame(events, [])
  t.ok(app.schemas.collection('post'), 'the registry is unchanged')
})

// Contract §5: `extends: null` means no parent. Fastify's body validation coerced it to "" (and
// other nulls too) before the registry saw it; a list of one name became a string.
t.test('extends: null is no parent: POST, PUT, JSON and JSON5 files, the raw route, on both stores', async t => {
  eachStore(t, async (t, _store, env) => {
    const nulls = { label: null, description: null, category: null, default_sort: null, default_order: null, display_field: null }
    const fields = { title: { field_type: 'string' } }
    const { app, types, events } = await setup(t, {
      'seo.json': seo,
      'onjson.json': { name: 'onjson', extends: null, fields },
      'onjson5.json5': '// no parent\n{ name: \'onjson5\', extends: null, label: null, fields: { title: { field_type: \'string\' } } }'
    }, env)
    for (const name of ['onjson', 'onjson5']) {
      const raw = await app.inject({ method: 'GET', url: `/api/schemas/${name}/raw` })
      t.equal(raw.statusCode, 200)
      t.equal(raw.json().extends, null, `${name}: the raw route answers extends: null`)
      const resolved = await app.inject({ method: 'GET', url: `/api/collections/${name}` })
      t.equal(resolved.statusCode, 200, `${name}: a collection without parent`)
      t.equal(resolved.json().extends, null)
    }

    const created = { name: 'page', extends: null, ...nulls, fields }
    const res = await app.inject({ method: 'POST', url: '/api/schemas', payload: created })
    t.equal(res.statusCode, 201, 'POST with extends: null')
    assertShape(t, SchemaDefinitionBody, res.json())
    t.strictSame(res.json(), created, 'every null answered as null')
    t.strictSame(JSON.parse(fileOf(types, 'page.json')), created, 'and written as null')
    t.strictSame((await app.inject({ method: 'GET', url: '/api/schemas/page/raw' })).json(), created)
    t.strictSame(Object.keys((await app.inject({ method: 'GET', url: '/api/collections/page' })).json().fields), ['title'])

    for (const [name, file] of [['onjson', 'onjson.json'], ['onjson5', 'onjson5.json5']] as const) {
      const next = { name, extends: null, ...nulls, fields }
      const put = await app.inject({ method: 'PUT', url: `/api/schemas/${name}`, payload: next })
      t.equal(put.statusCode, 200, `PUT ${file} with extends: null`)
      t.strictSame(put.json(), next)
      t.strictSame(JSON.parse(fileOf(types, file)), next, `${file} rewritten with null`)
    }

    const listed = { name: 'listed', extends: ['seo'], fields }
    t.equal((await app.inject({ method: 'POST', url: '/api/schemas', payload: listed })).statusCode, 201)
    t.strictSame(JSON.parse(fileOf(types, 'listed.json')).extends, ['seo'], 'a list of one name stays a list')
    const wrong = await app.inject({ method: 'POST', url: '/api/schemas', payload: { name: 'wrong', extends: false, fields } })
    assertError(t, wrong, 422, 'VALIDATION_FAILED')
    t.strictSame(wrong.json().errors, ['extends: must be a schema name, a list of schema names, or null'], 'the registry judges the value as sent')
    t.strictSame(events.map(e => e.event), ['schema.created', 'schema.updated', 'schema.updated', 'schema.created'])
  })
})

t.test('DELETE /api/schemas/<name>: 204 without a body, both files removed, schema.deleted emitted', async t => {
  const { app, types, events } = await setup(t, {
    'seo.json': seo,
    'post.json': post,
    'post.json5': JSON.stringify(post),
    'author.json': { name: 'author', fields: {} }
  })
  const res = await app.inject({ method: 'DELETE', url: '/api/schemas/post' })
  t.equal(res.statusCode, 204)
  t.equal(res.body, '', 'no body')
  t.strictSame(readdirSync(types).sort(), ['author.json', 'seo.json'])
  t.strictSame(events, [{ event: 'schema.deleted', name: 'post' }])
  assertError(t, await app.inject({ method: 'GET', url: '/api/collections/post' }), 404, 'NOT_FOUND')
  assertError(t, await app.inject({ method: 'GET', url: '/api/schemas/post/raw' }), 404, 'NOT_FOUND')
  assertError(t, await app.inject({ method: 'DELETE', url: '/api/schemas/post' }), 404, 'NOT_FOUND')
  assertError(t, await app.inject({ method: 'DELETE', url: '/api/schemas/Not-Valid' }), 400, 'BAD_REQUEST')
  assertError(t, await app.inject({ method: 'DELETE', url: '/api/schemas/..%2Fdata' }), 400, 'BAD_REQUEST')
  const partial = await app.inject({ method: 'DELETE', url: '/api/schemas/seo' })
  t.equal(partial.statusCode, 204, 'a reusable schema can be deleted')
  t.equal(events.length, 2)
})

t.test('writes require SchemasWrite when keys are on: 401 before anything else, 403 for editor and viewer', async t => {
  const { app, types, events } = await setup(t, { 'seo.json': seo }, KEYS_ENV)
  const writes = [
    { method: 'POST' as const, url: '/api/schemas', payload: post },
    { method: 'PUT' as const, url: '/api/schemas/seo', payload: seo },
    { method: 'DELETE' as const, url: '/api/schemas/seo' }
  ]
  for (const w of writes) {
    const anonymous = await app.inject(w)
    assertError(t, anonymous, 401, 'UNAUTHORIZED')
    t.equal(anonymous.headers['www-authenticate'], 'Bearer')
    assertError(t, await app.inject({ ...w, headers: auth('wrong-key-0123456789abcdef') }), 401, 'UNAUTHORIZED')
    assertError(t, await app.inject({ ...w, headers: auth(EDITOR_KEY) }), 403, 'FORBIDDEN')
    assertError(t, await app.inject({ ...w, headers: { 'x-api-key': VIEWER_KEY } }), 403, 'FORBIDDEN')
  }
  assertError(t, await app.inject({ method: 'POST', url: '/api/schemas', payload: { name: 'Bad' } }), 401, 'UNAUTHORIZED')
  t.strictSame(events, [])
  t.strictSame(readdirSync(types), ['seo.json'])

  t.equal((await app.inject({ ...writes[0], headers: auth(ADMIN_KEY) })).statusCode, 201)
  t.equal((await app.inject({ ...writes[1], headers: { 'x-api-key': ADMIN_KEY } })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: '/api/schemas/post', headers: auth(ADMIN_KEY) })).statusCode, 204)
  t.strictSame(events.map(e => e.event), ['schema.created', 'schema.updated', 'schema.deleted'])

  for (const url of ['/api/schemas', '/api/schemas/seo/raw', '/api/collections', '/api/collections/nope']) {
    const res = await app.inject({ method: 'GET', url })
    t.not(res.statusCode, 401, `reads are open: ${url}`)
  }
})

t.test('concurrent writes are serialized and leave no temp files', async t => {
  const { app, types } = await setup(t)
  const creates = await Promise.all(Array.from({ length: 4 }, async () =>
    await app.inject({ method: 'POST', url: '/api/schemas', payload: { name: 'note', fields: {} } })))
  t.strictSame(creates.map(r => r.statusCode).sort(), [201, 409, 409, 409])
  const updates = await Promise.all(Array.from({ length: 10 }, async (_, i) =>
    await app.inject({ method: 'PUT', url: '/api/schemas/note', payload: { name: 'note', description: `v${i}`, fields: {} } })))
  t.ok(updates.every(r => r.statusCode === 200))
  const onDisk = JSON.parse(fileOf(types, 'note.json')).description
  const served = (await app.inject({ method: 'GET', url: '/api/collections/note' })).json().description
  t.equal(served, onDisk, 'memory and disk agree after concurrent writes')
  t.strictSame(readdirSync(types), ['note.json'], 'no temp files left behind')
})

t.test('the OpenAPI document describes the schema and discovery routes', async t => {
  const { app } = await setup(t)
  const doc = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json()
  for (const p of ['/api/schemas/', '/api/schemas/{name}/', '/api/schemas/{name}/raw/', '/api/collections/', '/api/collections/{collection}/', '/api/locales/']) {
    const found = doc.paths[p] ?? doc.paths[p.replace(/\/$/, '')]
    t.ok(found, `${p} is documented`)
  }
  const postOp = doc.paths['/api/schemas/']?.post ?? doc.paths['/api/schemas']?.post
  t.ok(postOp?.responses?.['201'], 'POST documents 201')
  t.ok(postOp?.responses?.['422'], 'POST documents 422')
})
