import { mkdirSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { STORES, build, tempDir } from '../helper.js'
import { readSampleEntries, examplesDir } from '../../lib/schema/examples.js'

const published = { locale: null, environment: 'default' }

t.test('first start with CMS_SEED on: the sample entries are in the store', async t => {
  for (const store of ['sqlite', 'file']) {
    const app = await build(t, { CMS_SEED: 'true', CMS_STORE: store })
    t.equal(app.dataSeeded, true)
    const samples = await readSampleEntries(examplesDir())
    for (const sample of samples) {
      const entry = await app.store.get(published, sample.collection, sample.slug)
      t.ok(entry, `${store}: ${sample.collection}/${sample.slug} stored`)
      t.equal(entry?.status, sample.status)
    }
    t.equal((await app.store.get(published, 'post', 'hello-world'))?.data.author, 'ada-lovelace')
    t.equal((await app.store.get(published, 'post', 'drafting-in-the-open'))?.status, 'draft')
    t.equal((await app.store.get(published, 'headline', 'blog-intro'))?.data.tag, 'h2', 'defaults applied on the way in')
  }
})

t.test('the default scope: first locale and first environment', async t => {
  const app = await build(t, { CMS_SEED: 'true', CMS_LOCALES: 'de,en', CMS_ENVIRONMENTS: 'live,staging' })
  t.ok(await app.store.get({ locale: 'de', environment: 'live' }, 'author', 'ada-lovelace'))
  t.notOk(await app.store.get({ locale: 'en', environment: 'live' }, 'author', 'ada-lovelace'))
  t.notOk(await app.store.get({ locale: 'de', environment: 'staging' }, 'author', 'ada-lovelace'))
})

t.test('CMS_SEED=false seeds nothing', async t => {
  const app = await build(t, { CMS_SEED: 'false' })
  t.equal(app.dataSeeded, false)
  t.strictSame(app.schemas.names(), [])
  t.notOk(await app.store.get(published, 'author', 'ada-lovelace'))
})

t.test('an existing data dir is not seeded, and a restart does not seed again', async t => {
  const existing = path.join(tempDir(t), 'data')
  mkdirSync(path.join(existing, 'types'), { recursive: true })
  const app = await build(t, { CMS_SEED: 'true' }, { dataDir: existing })
  t.equal(app.dataSeeded, false)
  t.strictSame(app.schemas.names(), [])

  const fresh = path.join(tempDir(t), 'data')
  const first = await build(t, { CMS_SEED: 'true' }, { dataDir: fresh, keepOpen: true })
  t.equal(first.dataSeeded, true)
  await first.store.delete(published, 'author', 'alan-turing')
  await first.close()
  const second = await build(t, { CMS_SEED: 'true' }, { dataDir: fresh })
  t.equal(second.dataSeeded, false)
  t.notOk(await second.store.get(published, 'author', 'alan-turing'), 'a deleted sample does not come back')
  t.ok(await second.store.get(published, 'author', 'ada-lovelace'), 'the others are still there')
})

for (const store of STORES) {
  t.test(`${store}: a first start on a store that already holds content inserts no samples`, async t => {
    // A new types dir on a store written before: what a PostgreSQL replica with its own data
    // dir meets when it joins a database in use.
    const dataDir = path.join(tempDir(t), 'data')
    const before = await build(t, { CMS_STORE: store, CMS_SEED: 'false' }, { dataDir, keepOpen: true })
    await before.store.create(published, 'notes', { slug: 'kept', status: 'published', data: {} })
    await before.close()
    const joined = await build(t, { CMS_STORE: store, CMS_SEED: 'true', CMS_TYPES_DIR: path.join(tempDir(t), 'types') }, { dataDir })
    t.equal(joined.dataSeeded, true, 'the example schemas are copied into the new types dir')
    t.notOk(await joined.store.get(published, 'author', 'ada-lovelace'), 'but no sample entry is inserted')
    t.ok(await joined.store.get(published, 'notes', 'kept'))
  })
}

t.test('seeded entries are served by the API', async t => {
  const app = await build(t, { CMS_SEED: 'true' })
  const res = await app.inject({ method: 'GET', url: '/api/content/post/hello-world' })
  t.equal(res.statusCode, 200)
  t.equal(res.json().title, 'Hello, world')
})
