import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { conflict } from '../../../lib/errors.js'
import { copyExampleTypes, examplesDir, readSampleEntries, type SampleEntry } from '../../../lib/schema/examples.js'
import { SchemaFileRegistry } from '../../../lib/schema/registry.js'
import { insertSamples, referencedFirst } from '../../../lib/schema/seed.js'
import { compileCollection } from '../../../lib/schema/compile.js'
import type { CollectionModel, ResolvedSchema } from '../../../types/schema.js'
import type { EntryInput } from '../../../types/store.js'
import type { Scope } from '../../../types/scope.js'

const quiet = { info: () => {}, warn: () => {} }

async function exampleRegistry (t: Test): Promise<SchemaFileRegistry> {
  const types = mkdtempSync(path.join(os.tmpdir(), 'lectern-seed-'))
  t.teardown(() => { rmSync(types, { recursive: true, force: true }) })
  await copyExampleTypes(examplesDir(), types)
  const registry = new SchemaFileRegistry({ typesDir: types, log: { ...quiet, error: () => {} } })
  await registry.load()
  return registry
}

class FakeStore {
  readonly created: Array<{ scope: Scope, collection: string, input: EntryInput }> = []
  readonly ensured: string[] = []
  constructor (private readonly existing = new Set<string>()) {}
  async ensureCollection (collection: string): Promise<void> { this.ensured.push(collection) }
  async create (scope: Scope, collection: string, input: EntryInput): Promise<never> {
    if (this.existing.has(`${collection}/${input.slug}`)) throw conflict('exists')
    this.created.push({ scope, collection, input })
    return undefined as never
  }
}

const model = (name: string, refs: string[]): CollectionModel => compileCollection({
  name,
  reusable: false,
  strict: false,
  extends: null,
  fields: Object.fromEntries(refs.map((r, i) => [`ref${i}`, { field_type: 'reference' as const, collection: r }]))
} satisfies ResolvedSchema)

t.test('referencedFirst orders referenced collections before their referrers', async t => {
  const order = referencedFirst(new Map([
    ['post', model('post', ['author', 'category'])],
    ['category', model('category', ['category'])],
    ['author', model('author', ['avatar_set'])],
    ['a', model('a', ['b'])],
    ['b', model('b', ['a'])]
  ]))
  t.ok(order.indexOf('author') < order.indexOf('post'))
  t.ok(order.indexOf('category') < order.indexOf('post'))
  t.strictSame([...order].sort(), ['a', 'author', 'b', 'category', 'post'], 'every collection once, cycles included')
})

t.test('the example samples go in through the model, referenced collections first, drafts kept as drafts', async t => {
  const registry = await exampleRegistry(t)
  const samples = await readSampleEntries(examplesDir())
  const store = new FakeStore()
  const scope = { locale: 'en', environment: 'default' }
  const inserted = await insertSamples({ samples, schemas: registry, store, scope, log: quiet, keepVersions: 50 })
  t.equal(inserted, samples.length)
  t.ok(store.created.every(c => c.input.keepVersions === 50), 'each sample keeps its first version (CMS_REVISIONS)')
  const order = store.created.map(c => c.collection)
  t.ok(order.lastIndexOf('author') < order.indexOf('post'), 'authors before posts')
  t.ok(order.lastIndexOf('category') < order.indexOf('post'), 'categories before posts')
  t.ok(store.created.every(c => c.scope === scope), 'the given scope')
  const hello = store.created.find(c => c.input.slug === 'hello-world')
  t.equal(hello?.input.status, 'published')
  t.equal(store.created.find(c => c.input.slug === 'drafting-in-the-open')?.input.status, 'draft')
  t.equal(store.created.find(c => c.input.slug === 'schemas-as-files')?.input.data.featured, false, 'defaults applied')
  t.strictSame(store.created.find(c => c.input.slug === 'blog-intro')?.input.data.layout,
    { tablet: '6', mobile: '12', spaceBottom: 0, breakout: false }, 'nested defaults applied')
  t.equal(store.created.find(c => c.input.slug === 'news')?.input.data.color, '#4f46e5')
  t.notOk('_status' in (hello?.input.data ?? {}), 'the data holds schema fields only')
  t.strictSame([...new Set(store.ensured)].sort(), ['author', 'category', 'headline', 'post'])
})

t.test('an invalid sample throws; an existing entry is skipped', async t => {
  const registry = await exampleRegistry(t)
  const bad: SampleEntry[] = [{ collection: 'post', slug: 'bad', status: 'published', data: { reading_time: -1 } }]
  await t.rejects(insertSamples({ samples: bad, schemas: registry, store: new FakeStore(), scope: { locale: null, environment: 'default' }, log: quiet }),
    /sample entry post\/bad is not valid: title: is required; reading_time: must be at least 0/)
  const unknown: SampleEntry[] = [{ collection: 'seo', slug: 'x', status: 'published', data: {} }]
  await t.rejects(insertSamples({ samples: unknown, schemas: registry, store: new FakeStore(), scope: { locale: null, environment: 'default' }, log: quiet }),
    /'seo' is not a collection/)

  const warned: string[] = []
  const store = new FakeStore(new Set(['author/ada-lovelace']))
  const samples = (await readSampleEntries(examplesDir())).filter(s => s.collection === 'author')
  const inserted = await insertSamples({ samples, schemas: registry, store, scope: { locale: null, environment: 'default' }, log: { ...quiet, warn: (_o, m) => { warned.push(m) } } })
  t.equal(inserted, samples.length - 1)
  t.strictSame(warned, ['sample entry skipped: an entry with that slug exists'])
})
