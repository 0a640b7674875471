// The references plugin in the app: its steps of the write pipeline, and the reverse-reference index kept in
// `<dataDir>/references.json` across restarts, rebuilt when that file cannot be trusted.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { REFERENCE_INDEX_FILE, OPEN_MARKER } from '../../lib/references/index-file.js'
import { ReferenceService } from '../../lib/references/service.js'
import { assertError, eachStore, tempDir, type Env } from '../helper.js'
import { PUBLIC_URL, seed, setup, type Client } from '../lib/references/app-fixture.js'

const indexFile = (c: Client): string => path.join(c.dataDir, REFERENCE_INDEX_FILE)
const marker = (c: Client): string => path.join(c.dataDir, OPEN_MARKER)

/** The referrers of an entry, straight from the decorator. */
const referrersOf = async (c: Client, collection: string, slug: string): Promise<string[]> =>
  (await c.app.references.referrers(collection, slug)).map(r => `${r.collection}/${r.slug}.${r.field}`)

/** Starts the app on `dataDir` again, closed by the test itself. */
async function restart (t: Test, env: Env, dataDir: string): Promise<Client> {
  return await setup(t, env, { dataDir, keepOpen: true })
}

eachStore(t, async (t, store, env) => {
  // With PostgreSQL the index is built from the database at every start and no file is kept.
  const fileKept = store !== 'postgres'
  const noFile = !fileKept && 'no index file is kept with postgres'

  t.test('decorates fastify.references (the content plugin is handed it: the tests below)', async t => {
    const c = await setup(t, env)
    t.ok(c.app.references instanceof ReferenceService)
    t.equal(existsSync(marker(c)), fileKept, 'the index is open: its marker is there (not with postgres)')
    t.equal(existsSync(indexFile(c)), fileKept, 'a new data dir: the (empty) index is saved at once (not with postgres)')
  })

  t.test('reference check on create: one 422 message per missing target, nothing stored', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    const res = await c.post('posts', {
      _slug: 'bad', title: 'Bad', author: 'nobody', tags: ['news', 'ghost', 'phantom'], seo: { by: 'nobody' }, related: ['hello', 'missing']
    })
    assertError(t, res, 422, 'VALIDATION_FAILED')
    t.same(res.json().errors, [
      "author: no 'authors' entry with the slug 'nobody'",
      "tags: no 'tags' entry with the slug 'ghost'",
      "tags: no 'tags' entry with the slug 'phantom'",
      "seo.by: no 'authors' entry with the slug 'nobody'",
      "related: no 'posts' entry with the slug 'missing'"
    ])
    assertError(t, await c.get('/api/content/posts/bad'), 404, 'NOT_FOUND')
    t.same(await referrersOf(c, 'authors', 'nobody'), [])

    const ok = await c.create(t, 'posts', {
      _slug: 'good', title: 'Good', author: { _slug: 'jane', name: 'ignored' }, tags: [{ _slug: 'news' }, 'tech', 'news'], related: [{ _slug: 'hello' }]
    })
    t.equal(ok.author, 'jane', 'a reference given as an object with _slug is stored as its slug')
    t.same(ok.tags, ['news', 'tech'], 'multiple references: slugs, duplicates removed')
    t.same(ok.related, ['hello'])
    t.same(await referrersOf(c, 'posts', 'hello'), ['posts/good.related'])
  })

  t.test('reference check on update (PUT and PATCH), and references stay within the locale', async t => {
    const c = await setup(t, { ...env, CMS_LOCALES: 'en,de' })
    await seed(t, c)
    const put = await c.put('posts/hello', { title: 'Hello', author: 'ghost', tags: ['news'] })
    assertError(t, put, 422, 'VALIDATION_FAILED')
    t.same(put.json().errors, ["author: no 'authors' entry with the slug 'ghost'"])
    const patch = await c.app.inject({ method: 'PATCH', url: '/api/content/posts/hello', payload: { seo: { by: 'ghost' } } })
    assertError(t, patch, 422, 'VALIDATION_FAILED')
    t.same(patch.json().errors, ["seo.by: no 'authors' entry with the slug 'ghost'"])
    t.equal((await c.get('/api/content/posts/hello')).json().author, 'jane', 'nothing stored')

    // jane exists in en only.
    const de = await c.post('posts', { _slug: 'hallo', title: 'Hallo', author: 'jane' }, undefined, '?_locale=de')
    assertError(t, de, 422, 'VALIDATION_FAILED')
    t.same(de.json().errors, ["author: no 'authors' entry with the slug 'jane'"])
    await c.create(t, 'authors', { _slug: 'jane', name: 'Jane (de)' }, undefined, '?_locale=de')
    await c.create(t, 'posts', { _slug: 'hallo', title: 'Hallo', author: 'jane' }, undefined, '?_locale=de')
  })

  t.test('environments: references are checked within the environment', async t => {
    const c = await setup(t, { ...env, CMS_ENVIRONMENTS: 'main,staging' })
    await seed(t, c)
    const res = await c.post('posts', { _slug: 'p', title: 'P', author: 'jane' }, undefined, '?_environment=staging')
    assertError(t, res, 422, 'VALIDATION_FAILED')
    await c.create(t, 'posts', { _slug: 'p', title: 'P', author: 'jane' }, undefined, '?_environment=main')
  })

  t.test('asset URLs under the public URL are stored relative, anywhere in the entry', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    const body = await c.create(t, 'posts', {
      _slug: 'assets',
      title: 'Assets',
      cover: `${PUBLIC_URL}/api/assets/cover.png`,
      seo: { image: `${PUBLIC_URL}/api/assets/seo/og.png` },
      blocks: [{ text: 'a', image: `${PUBLIC_URL}/api/assets/b1.png` }, { text: 'b', image: 'https://other.example.com/api/assets/x.png' }],
      extra: { gallery: [`${PUBLIC_URL}/api/assets/g1.png`, { src: `${PUBLIC_URL}/api/assets/g2.png` }], note: `${PUBLIC_URL}/about` }
    })
    const expected = {
      cover: '/api/assets/cover.png',
      seo: { image: '/api/assets/seo/og.png' },
      blocks: [{ text: 'a', image: '/api/assets/b1.png' }, { text: 'b', image: 'https://other.example.com/api/assets/x.png' }],
      extra: { gallery: ['/api/assets/g1.png', { src: '/api/assets/g2.png' }], note: `${PUBLIC_URL}/about` }
    }
    t.match(body, expected, 'the create answer shows the stored, relative form')
    t.match((await c.get('/api/content/posts/assets')).json(), expected, 'stored relative; a read without _resolve keeps them relative')

    const put = await c.put('posts/assets', { title: 'Assets', cover: `${PUBLIC_URL}/api/assets/new.png`, extra: [`${PUBLIC_URL}/api/assets/in-array.png`] })
    t.equal(put.statusCode, 200)
    t.match(put.json(), { cover: '/api/assets/new.png', extra: ['/api/assets/in-array.png'] }, 'updates too')
  })

  t.test('the index survives a restart: loaded from its file, not rebuilt', { skip: noFile }, async t => {
    const dataDir = path.join(tempDir(t), 'data')
    let c = await restart(t, env, dataDir)
    await seed(t, c)
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/hello.author'])
    await c.app.close()
    t.notOk(existsSync(marker(c)), 'a clean close removes the marker')
    const saved = JSON.parse(readFileSync(indexFile(c), 'utf8'))
    t.equal(saved.format, 'lectern-references')

    // Add a record only the file knows: if it shows after the restart, the file was used.
    saved.referrers.push(['posts', 'phantom', null, [['author', 'authors', 'jane']]])
    writeFileSync(indexFile(c), JSON.stringify(saved))
    c = await restart(t, env, dataDir)
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/hello.author', 'posts/phantom.author'], 'loaded from the file')
    t.same(await referrersOf(c, 'authors', 'joe'), ['posts/hello.seo.by'])
    await c.app.close()

    // Deleted: rebuilt from the stored entries (the phantom goes).
    rmSync(indexFile(c))
    c = await restart(t, env, dataDir)
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/hello.author'], 'rebuilt after the file was deleted')
    t.ok(existsSync(indexFile(c)), 'and saved again')
    await c.app.close()

    // Corrupted: rebuilt.
    writeFileSync(indexFile(c), '{"format": "lectern-references", "version": 1, "referrers": [["x"')
    c = await restart(t, env, dataDir)
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/hello.author'], 'rebuilt after the file was corrupted')
    t.same(JSON.parse(readFileSync(indexFile(c), 'utf8')).format, 'lectern-references', 'the corrupt file is replaced')
    await c.app.close()
  })

  t.test('a crash (the marker left behind) makes the next start rebuild', { skip: noFile }, async t => {
    const dataDir = path.join(tempDir(t), 'data')
    let c = await restart(t, env, dataDir)
    await seed(t, c)
    await c.app.close()
    const saved = JSON.parse(readFileSync(indexFile(c), 'utf8'))
    saved.referrers.push(['posts', 'phantom', null, [['author', 'authors', 'jane']]])
    writeFileSync(indexFile(c), JSON.stringify(saved))
    // A run that died: its marker is still there, and its file may lag behind the content.
    writeFileSync(marker(c), 'left by a crash')
    c = await restart(t, env, dataDir)
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/hello.author'], 'the file was not trusted')
    await c.app.close()
  })

  t.test('the index follows create, update and delete, and saves each change', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    let c = await restart(t, env, dataDir)
    await seed(t, c)
    await c.create(t, 'posts', { _slug: 'second', title: 'Second', author: 'joe', related: ['hello'] })
    t.same(await referrersOf(c, 'authors', 'joe'), ['posts/hello.seo.by', 'posts/second.author'])
    t.same(await referrersOf(c, 'posts', 'hello'), ['posts/second.related'])

    t.equal((await c.put('posts/second', { title: 'Second', author: 'jane' })).statusCode, 200)
    t.same(await referrersOf(c, 'authors', 'joe'), ['posts/hello.seo.by'], 'rebuilt for the updated entry')
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/hello.author', 'posts/second.author'])
    t.same(await referrersOf(c, 'posts', 'hello'), [])

    t.equal((await c.del('posts/hello')).statusCode, 204)
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/second.author'], 'removed as a referrer')
    t.same(await referrersOf(c, 'authors', 'joe'), [])
    t.equal((await c.del('authors/jane')).statusCode, 204)
    t.same(await referrersOf(c, 'authors', 'jane'), [], 'removed as a referenced entry')
    await c.create(t, 'authors', { _slug: 'jane', name: 'Jane again' })
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/second.author'], 'a new jane: the entries that still name her count again')

    await c.app.close()
    c = await restart(t, env, dataDir)
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/second.author'], 'the state after the last change was saved')
    t.same(await referrersOf(c, 'authors', 'joe'), [])
    await c.app.close()
  })

  t.test('schema changes re-index the collections whose reference fields changed', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    t.same(await referrersOf(c, 'tags', 'news'), ['posts/hello.tags'])
    const schema = JSON.parse(readFileSync(path.join(c.dataDir, 'types', 'posts.json'), 'utf8'))
    schema.fields.tags = { field_type: 'json' }
    const res = await c.app.inject({ method: 'PUT', url: '/api/schemas/posts', payload: schema })
    t.equal(res.statusCode, 200, 'schema updated', { body: res.body })
    t.same(await referrersOf(c, 'tags', 'news'), [], 'tags is no longer a reference field')
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/hello.author'], 'other fields stay')
    schema.fields.tags = { field_type: 'reference', collection: 'tags', multiple: true }
    t.equal((await c.app.inject({ method: 'PUT', url: '/api/schemas/posts', payload: schema })).statusCode, 200)
    t.same(await referrersOf(c, 'tags', 'news'), ['posts/hello.tags'], 'and back: the stored values count again')
  })

  t.test('schema files edited while the server was down: the saved index is outdated, rebuilt', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    let c = await restart(t, env, dataDir)
    await seed(t, c)
    await c.app.close()
    const file = path.join(dataDir, 'types', 'posts.json')
    const schema = JSON.parse(readFileSync(file, 'utf8'))
    schema.fields.author = { field_type: 'string' }
    writeFileSync(file, JSON.stringify(schema))
    c = await restart(t, env, dataDir)
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends'], 'posts.author is a plain string now')
    await c.app.close()
  })

  t.test('with environments there is no index, and no file', async t => {
    const c = await setup(t, { ...env, CMS_ENVIRONMENTS: 'main,staging' })
    await seed(t, c)
    t.same(await c.app.references.referrers('authors', 'jane'), [])
    t.notOk(c.app.references.indexEnabled)
    t.notOk(existsSync(indexFile(c)))
    t.notOk(existsSync(marker(c)))
  })

  t.test('postgres: another replica, with its own data dir, builds the index from the database; no file', { skip: fileKept && 'only PostgreSQL is shared by processes' }, async t => {
    const c = await setup(t, env)
    await seed(t, c)
    const other = await setup(t, { ...env, CMS_DATABASE_URL: c.app.config.databaseUrl ?? '', CMS_TYPES_DIR: path.join(c.dataDir, 'types') })
    t.not(other.dataDir, c.dataDir)
    t.same(await referrersOf(other, 'authors', 'jane'), await referrersOf(c, 'authors', 'jane'))
    t.ok((await referrersOf(other, 'authors', 'jane')).length > 0, 'the seeded references')
    t.notOk(existsSync(indexFile(other)))
  })

  t.test('environments turned on and off again: the index is rebuilt, not taken from a stale file', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    let c = await restart(t, env, dataDir)
    await seed(t, c)
    await c.app.close()
    t.equal(existsSync(indexFile(c)), fileKept)
    // With environments, writes are not indexed: the old file would be stale afterwards.
    c = await restart(t, { ...env, CMS_ENVIRONMENTS: 'default,staging' }, dataDir)
    t.notOk(existsSync(indexFile(c)), 'the saved index is removed')
    await c.create(t, 'posts', { _slug: 'later', title: 'Later', author: 'jane' })
    await c.app.close()
    c = await restart(t, env, dataDir)
    t.same(await referrersOf(c, 'authors', 'jane'), ['authors/joe.friends', 'posts/hello.author', 'posts/later.author'], 'rebuilt from the stored entries')
    await c.app.close()
  })
})
