// A typed client generated from the served document (openapi-typescript + openapi-fetch) types
// every field of a collection: the correct uses compile under tsc --strict, and each wrong use
// is refused (a `@ts-expect-error` line that compiles fails the build: TS2578). The document's
// per-collection part follows every schema change.
import { execFile } from 'node:child_process'
import { symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import openapiTS, { astToString } from 'openapi-typescript'
import t from 'tap'
import { ADMIN_KEY, KEYS_ENV, ROOT, auth, tempDir } from '../helper.js'
import { appWithSchemas, documentOf } from './fixtures.js'

const PROGRAM = `
import createClient from 'openapi-fetch'
import type { components, paths } from './api.js'

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000' })
type Article = components['schemas']['article.Entry']

export async function correct (): Promise<void> {
  const { data } = await client.GET('/api/content/article/{slug}', { params: { path: { slug: 'first' }, query: { _resolve: '1' } } })
  if (data !== undefined) {
    const title: string | undefined = data.title
    const kind: 'news' | 'essay' | undefined = data.kind
    const views: number | null | undefined = data.views
    const status: 'draft' | 'published' = data._status
    const summary: string | undefined = data.meta?.summary
    const tags: Array<'a' | 'b' | 'c'> | null | undefined = data.tags
    void [title, kind, views, status, summary, tags]
  }
  const list = await client.GET('/api/content/article', { params: { query: { _page: '2', _sort: '-title' } } })
  const first: Article | undefined = list.data?.items[0]
  void first
  await client.POST('/api/content/article', {
    body: { _slug: 'x', title: 'T', kind: 'news', tags: ['a'], author: 'ada', reviewers: ['ada'], meta: { summary: 's' }, _status: 'draft' }
  })
  await client.PUT('/api/content/article/{slug}', { params: { path: { slug: 'x' } }, body: { title: 'T', kind: 'essay' } })
  await client.PATCH('/api/content/article/{slug}', { params: { path: { slug: 'x' } }, body: { views: 2, rating: null } })
  await client.DELETE('/api/content/article/{slug}', { params: { path: { slug: 'x' } } })
  await client.GET('/api/assets/{path}', { params: { path: { path: 'pics/red.png' } } })
}

export async function wrong (): Promise<void> {
  // @ts-expect-error an unknown field
  await client.POST('/api/content/article', { body: { _slug: 'x', title: 'T', kind: 'news', nope: 1 } })
  // @ts-expect-error a wrong type
  await client.POST('/api/content/article', { body: { _slug: 'x', title: 'T', kind: 'news', views: 'many' } })
  // @ts-expect-error a bad _status
  await client.PATCH('/api/content/article/{slug}', { params: { path: { slug: 'x' } }, body: { _status: 'archived' } })
  // @ts-expect-error an unknown collection
  await client.GET('/api/content/nope')
  // @ts-expect-error an option not in the select
  await client.PUT('/api/content/article/{slug}', { params: { path: { slug: 'x' } }, body: { title: 'T', kind: 'poem' } })
  // @ts-expect-error a required field missing on create
  await client.POST('/api/content/article', { body: { _slug: 'x', kind: 'news' } })
  // @ts-expect-error a reference is a slug, not a number
  await client.POST('/api/content/article', { body: { _slug: 'x', title: 'T', kind: 'news', author: 7 } })
  const { data } = await client.GET('/api/content/article/{slug}', { params: { path: { slug: 'first' } } })
  // @ts-expect-error an unknown field read
  void data?.nope
  // @ts-expect-error a field of the wrong type read
  const views: string | undefined = data?.views
  void views
}
`

t.test('a typed client from the document: correct uses compile, wrong ones do not', async t => {
  const app = await appWithSchemas(t, KEYS_ENV)
  const doc = await documentOf(app)
  const dir = tempDir(t)
  writeFileSync(path.join(dir, 'api.ts'), astToString(await openapiTS(doc as unknown as Parameters<typeof openapiTS>[0])))
  writeFileSync(path.join(dir, 'program.ts'), PROGRAM)
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'ES2023',
      lib: ['ES2023', 'DOM'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      skipLibCheck: true,
      types: []
    },
    files: ['program.ts']
  }))
  writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }')
  // The temp dir is outside the project: the client library is found through a link to its node_modules.
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  const tsc = path.join(ROOT, 'node_modules', '.bin', 'tsc')
  const result = await promisify(execFile)(tsc, ['-p', dir]).then(() => ({ ok: true, out: '' }), (err: { stdout: string }) => ({ ok: false, out: err.stdout }))
  t.ok(result.ok, 'tsc --strict: the correct uses compile and every wrong use is refused', { output: result.out })
})

t.test('the per-collection part follows schema changes', async t => {
  const app = await appWithSchemas(t, KEYS_ENV)
  const before = await documentOf(app)
  t.notOk(before.paths['/api/content/event'], 'no path before the collection exists')
  const event = { name: 'event', fields: { title: { field_type: 'string', required: true } } }
  const created = await app.inject({ method: 'POST', url: '/api/schemas', headers: auth(ADMIN_KEY), payload: event })
  t.equal(created.statusCode, 201)
  const after = await documentOf(app)
  t.ok(after.paths['/api/content/event']?.post, 'the new collection has its paths')
  t.same(after.components.schemas?.['event.Create']?.required, ['_slug', 'title'])
  const updated = await app.inject({
    method: 'PUT',
    url: '/api/schemas/event',
    headers: auth(ADMIN_KEY),
    payload: { ...event, fields: { ...event.fields, room: { field_type: 'select', options: ['a', 'b'], required: true } } }
  })
  t.equal(updated.statusCode, 200)
  const changed = await documentOf(app)
  t.match(changed.components.schemas?.['event.Entry']?.properties, { room: { enum: ['a', 'b'] } }, 'a select is an enum')
  t.same(changed.components.schemas?.['event.Create']?.required, ['_slug', 'title', 'room'])
  t.same(await documentOf(app), changed, 'unchanged schemas: the same document')
  await app.inject({ method: 'DELETE', url: '/api/schemas/event', headers: auth(ADMIN_KEY) })
  t.notOk((await documentOf(app)).paths['/api/content/event'], 'a deleted collection leaves the document')
})
