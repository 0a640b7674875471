import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { copyExampleTypes, examplesDir, findPackageRoot, readSampleEntries } from '../../../lib/schema/examples.js'
import { SchemaFileRegistry } from '../../../lib/schema/registry.js'

function tempDir (t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-examples-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

const quiet = { info: () => {}, warn: () => {}, error: () => {} }

t.test('the package root is found from sources and from a deeper dist/ folder', async t => {
  const root = findPackageRoot(import.meta.dirname)
  t.ok(readdirSync(root).includes('package.json'))
  t.equal(findPackageRoot(path.join(root, 'dist', 'lib', 'schema')), root, 'dist/ has no package.json: walks up')
  t.equal(examplesDir(), path.join(root, 'examples'))
  t.throws(() => findPackageRoot('/'), /no package.json/)
})

t.test('the example schemas: seo (reusable), post extends seo, author, category, headline in JSON Schema notation', async t => {
  const types = tempDir(t)
  const copied = await copyExampleTypes(examplesDir(), types)
  t.strictSame(copied.sort(), ['author.json', 'category.json', 'headline.json', 'post.json5', 'seo.json5'])
  t.match(readFileSync(path.join(types, 'seo.json5'), 'utf8'), /^\/\/ /, 'a commented .json5 file')
  const warnings: string[] = []
  const registry = new SchemaFileRegistry({ typesDir: types, log: { ...quiet, warn: (_o, msg) => { warnings.push(msg) } } })
  await registry.load()
  t.strictSame(warnings, [], 'every example loads cleanly')
  t.strictSame(registry.names(), ['author', 'category', 'headline', 'post', 'seo'])
  t.strictSame(registry.collections().map(m => m.schema.name), ['author', 'category', 'headline', 'post'])

  const post = registry.collection('post')?.schema
  t.equal(post?.extends, 'seo')
  t.strictSame(Object.keys(post?.fields ?? {}), ['meta_title', 'meta_description', 'og_image', 'title', 'body', 'excerpt', 'author',
    'categories', 'tags', 'cover', 'published_at', 'featured', 'reading_time'])
  t.strictSame(post?.fields.title, { field_type: 'string', label: 'Title', required: true, max_length: 200 })
  t.strictSame(post?.fields.og_image, { field_type: 'asset', label: 'Social image', accept: 'image/*' })
  t.strictSame(post?.fields.categories, { field_type: 'reference', label: 'Categories', collection: 'category', multiple: true })
  t.equal(post?.fields.featured?.default, false)
  t.equal(post?.fields.reading_time?.min, 0)
  t.equal(post?.default_sort, 'published_at')
  t.equal(post?.default_order, 'desc')
  t.equal(post?.display_field, 'title')
  t.strictSame(registry.collection('author')?.uniqueFields, ['email'])
  t.equal(registry.collection('headline')?.schema.strict, false)
})

t.test('copying never overwrites an existing schema file', async t => {
  const types = tempDir(t)
  writeFileSync(path.join(types, 'post.json5'), '// mine')
  const copied = await copyExampleTypes(examplesDir(), types)
  t.notOk(copied.includes('post.json5'))
  t.equal(readFileSync(path.join(types, 'post.json5'), 'utf8'), '// mine')
})

t.test('every sample entry is valid against its example schema and references existing samples', async t => {
  const types = tempDir(t)
  await copyExampleTypes(examplesDir(), types)
  const registry = new SchemaFileRegistry({ typesDir: types, log: quiet })
  await registry.load()
  const samples = await readSampleEntries(examplesDir())
  const count = (c: string): number => samples.filter(s => s.collection === c).length
  t.ok(count('author') >= 2 && count('category') >= 2, 'a few authors and categories')
  t.equal(count('post'), 3, 'three posts')
  t.equal(samples.filter(s => s.collection === 'post' && s.status === 'draft').length, 1, 'one of them a draft')
  t.equal(count('headline'), 2, 'two headlines')
  const slugs = new Set(samples.map(s => `${s.collection}/${s.slug}`))
  for (const sample of samples) {
    const model = registry.collection(sample.collection)
    t.ok(model, `${sample.collection} is a collection`)
    if (model === null) continue
    t.notOk('_status' in sample.data, 'the status is not data')
    const data = model.normalize(model.applyDefaults(sample.data))
    t.strictSame(model.validate(data), [], `${sample.collection}/${sample.slug} is valid`)
    for (const ref of model.referenceFields) {
      const value = data[ref.path]
      for (const slug of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
        t.ok(slugs.has(`${ref.collection}/${String(slug)}`), `${sample.slug}.${ref.path} → ${ref.collection}/${String(slug)} exists`)
      }
    }
  }
})

t.test('a malformed sample is a bug: readSampleEntries throws', async t => {
  const dir = tempDir(t)
  mkdirSync(path.join(dir, 'content', 'post'), { recursive: true })
  writeFileSync(path.join(dir, 'content', 'post', 'Bad Slug.json'), '{}')
  await t.rejects(readSampleEntries(dir), /not a normalized slug/)
  rmSync(path.join(dir, 'content', 'post', 'Bad Slug.json'))
  writeFileSync(path.join(dir, 'content', 'post', 'ok.json'), '{ "_status": "archived" }')
  await t.rejects(readSampleEntries(dir), /_status must be draft or published/)
  writeFileSync(path.join(dir, 'content', 'post', 'ok.json'), '{ "_status": "draft", "_slug": "ignored", "title": "x" }')
  t.strictSame(await readSampleEntries(dir), [{ collection: 'post', slug: 'ok', status: 'draft', data: { title: 'x' } }])
  t.strictSame(await readSampleEntries(path.join(dir, 'nowhere')), [], 'no content folder: no samples')
})
