// The `lectern` command (contract §16) on every store, on a data directory: an export reproduces
// the API's bodies byte for byte, an import recreates them (and changes nothing in their source),
// validate finds exactly the problems there are.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { EDITOR_KEY, STORES, auth, build, storeEnv, tempDir, type Env, type StoreName } from '../helper.js'
import { SCHEMAS, dataDirWithSchemas } from '../openapi/fixtures.js'
import { lectern, type Run } from './run.js'
import { AdvisoryLock } from '../../lib/cluster/write-lock.js'
import { PostgresStore } from '../../lib/store/postgres.js'

// Each store opens apps and commands on several data dirs, one after the other: on a loaded
// 2-core machine the three stores take more than .taprc's 120 s (95 to 150 s measured).
t.setTimeout(360_000)

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082', 'hex')

/** A data dir with the test collections, a few entries (a draft, references) and an asset. */
async function seeded (t: Test, store: StoreName): Promise<{ dataDir: string, bodies: Map<string, string> }> {
  const dataDir = dataDirWithSchemas(t)
  const app = await build(t, { CMS_STORE: store }, { dataDir, keepOpen: true })
  const write = async (url: string, payload: object): Promise<void> => {
    const res = await app.inject({ method: 'POST', url, payload, headers: auth(EDITOR_KEY) })
    t.equal(res.statusCode, 201, `POST ${url}`)
  }
  await write('/api/content/person', { _slug: 'ada', name: 'Ada' })
  await write('/api/content/person', { _slug: 'bob', name: 'Bob', _status: 'draft' })
  await write('/api/content/article', { _slug: 'first', title: 'First', kind: 'news', tags: ['b', 'a'], author: 'ada', reviewers: ['bob'], meta: { summary: 'S' }, code: 'X' })
  await write('/api/content/article', { _slug: 'second', title: 'Second', kind: 'essay', rating: 2.5, extra: { deep: [1, { a: null }], text: 'Ünïcode ✓' } })
  const boundary = 'b0undary'
  const payload = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="dot.png"\r\nContent-Type: image/png\r\n\r\n`), PNG, Buffer.from(`\r\n--${boundary}--\r\n`)])
  const up = await app.inject({ method: 'POST', url: '/api/assets', payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } })
  t.equal(up.statusCode, 201, 'asset uploaded')
  const bodies = new Map<string, string>()
  for (const url of ['/api/content/person/ada', '/api/content/person/bob', '/api/content/article/first', '/api/content/article/second']) {
    bodies.set(url, (await app.inject({ method: 'GET', url })).body)
  }
  await app.close()
  return { dataDir, bodies }
}

/** Every file of a directory tree, by relative path, with its bytes. */
function tree (dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>()
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const full = path.join(entry.parentPath, entry.name)
    out.set(path.relative(dir, full), readFileSync(full))
  }
  return out
}

/** `lectern <args>` on the store, its data dir's database given as a server's would be (CMS_DATABASE_URL with postgres). */
async function cli (t: Test, args: string[], store: StoreName): Promise<Run> {
  const dataDir = args[args.indexOf('--data-dir') + 1] as string
  return await lectern(args, store, await storeEnv(t, store, dataDir))
}

const withoutTimestamps = (text: string): string => JSON.stringify(JSON.parse(text, (k, v: unknown) => k === '_created_at' || k === '_updated_at' ? undefined : v))

for (const store of STORES) {
  t.test(`store=${store}: export, import, validate`, async t => {
    const { dataDir, bodies } = await seeded(t, store)
    const out = path.join(tempDir(t), 'export')
    const exported = await cli(t, ['export', '--data-dir', dataDir, '--out', out, '--assets'], store)
    t.equal(exported.code, 0, 'export exits 0', exported)
    t.match(exported.out, /exported 4 entries of 2 collections, 2 schemas, 1 assets/)
    const manifest = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8'))
    t.match(manifest, { lectern: '0.0.0-test', status: 'all', locales: [null], schemas: ['article', 'person'], counts: { article: { _: 2 }, person: { _: 2 } }, assets: 1 })
    for (const [url, body] of bodies) {
      const [, , , collection, slug] = url.split('/')
      t.equal(readFileSync(path.join(out, 'content', collection ?? '', '_', `${slug ?? ''}.json`), 'utf8'), body, `${url}: the body of GET, byte for byte`)
    }
    t.same(JSON.parse(readFileSync(path.join(out, 'content', 'article', '_', 'index.json'), 'utf8')), ['second', 'first'], 'index in default_sort order (title, desc by default)')
    t.same(readFileSync(path.join(out, 'assets', 'dot.png')), PNG, 'the asset file')
    t.same(JSON.parse(readFileSync(path.join(out, 'schemas', 'article.json'), 'utf8')), SCHEMAS.article, 'the schema as stored')

    // The manifest's cursor goes on from the export: nothing new, then only what was written since.
    const cursor = manifest.cursors?._ as string
    t.type(cursor, 'string', 'a sync cursor for the locale directory')
    const later = await build(t, { CMS_STORE: store }, { dataDir, keepOpen: true })
    t.match((await later.inject({ url: `/api/sync?cursor=${encodeURIComponent(cursor)}` })).json(), { items: [], more: false }, 'nothing changed since the export')
    await later.inject({ method: 'PATCH', url: '/api/content/person/ada', payload: { name: 'Ada L.' } })
    t.match((await later.inject({ url: `/api/sync?cursor=${encodeURIComponent(cursor)}` })).json(), { items: [{ op: 'upsert', collection: 'person', slug: 'ada' }] })
    await later.inject({ method: 'PATCH', url: '/api/content/person/ada', payload: { name: 'Ada' } })
    bodies.set('/api/content/person/ada', (await later.inject({ url: '/api/content/person/ada' })).body)
    await later.close()
    const out2 = path.join(tempDir(t), 'export2')
    t.equal((await cli(t, ['export', '--data-dir', dataDir, '--out', out2, '--assets'], store)).code, 0)
    t.equal(readFileSync(path.join(out2, 'content', 'person', '_', 'ada.json'), 'utf8'), bodies.get('/api/content/person/ada'))

    // Into an empty data dir: schemas written, every entry created, identical but for the store's timestamps.
    const fresh = path.join(tempDir(t), 'fresh')
    const imported = await cli(t, ['import', out, '--data-dir', fresh], store)
    t.equal(imported.code, 0, 'import exits 0', imported)
    t.match(imported.out, /imported: 4 created, 0 updated, 0 unchanged, 2 schemas \(article, person\), 0 refused/)
    const again = path.join(tempDir(t), 'again')
    t.equal((await cli(t, ['export', '--data-dir', fresh, '--out', again], store)).code, 0)
    for (const [file, bytes] of tree(path.join(out, 'content'))) {
      t.equal(withoutTimestamps(readFileSync(path.join(again, 'content', file), 'utf8')), withoutTimestamps(bytes.toString('utf8')), `${file} reproduced`)
    }

    // Back into its source: nothing changes, and a new export is identical byte for byte.
    const back = await cli(t, ['import', out2, '--data-dir', dataDir], store)
    t.match(back.out, /0 created, 0 updated, 4 unchanged/)
    const second = path.join(tempDir(t), 'second')
    t.equal((await cli(t, ['export', '--data-dir', dataDir, '--out', second, '--assets'], store)).code, 0)
    for (const [file, bytes] of tree(out2)) if (file !== 'manifest.json') t.same(readFileSync(path.join(second, file)), bytes, `${file}: byte for byte`)

    t.match(await cli(t, ['import', out, '--data-dir', fresh, '--dry-run'], store), { code: 0, out: /would write: 0 created, 0 updated, 4 unchanged/ })

    // validate: clean, then a field made required that one entry lacks, and a reference to a gone entry.
    t.match(await cli(t, ['validate', '--data-dir', dataDir], store), { code: 0, out: /every entry is valid/ })
    const article = { ...SCHEMAS.article, fields: { ...SCHEMAS.article.fields, views: { field_type: 'integer', required: true } } }
    writeFileSync(path.join(dataDir, 'types', 'article.json'), JSON.stringify(article))
    const app = await build(t, { CMS_STORE: store }, { dataDir, keepOpen: true })
    t.equal((await app.inject({ method: 'DELETE', url: '/api/content/person/bob' })).statusCode, 204)
    await app.close()
    const broken = await cli(t, ['validate', '--data-dir', dataDir], store)
    t.equal(broken.code, 1, 'validate exits 1 on problems')
    t.match(broken.out, /article\/_\/first: views: .*\n/)
    t.match(broken.out, /article\/_\/second: views: /)
    t.match(broken.out, /article\/_\/first reviewers: references 'bob', which is not an entry of 'person'/)
    t.match(broken.out, /3 problem\(s\)/)
  })
}

t.test('locales and environments: the data dir read with the server\'s settings', async t => {
  const env = { CMS_LOCALES: 'en,fr', CMS_ENVIRONMENTS: 'main,staging' }
  const dataDir = dataDirWithSchemas(t)
  const app = await build(t, env, { dataDir, keepOpen: true })
  for (const [locale, name] of [['en', 'Ada'], ['fr', 'Adà']]) {
    const res = await app.inject({ method: 'POST', url: `/api/content/person?_locale=${locale}&_environment=staging`, payload: { _slug: 'ada', name } })
    t.equal(res.statusCode, 201)
  }
  await app.close()
  const out = path.join(tempDir(t), 'export')
  t.equal((await lectern(['export', '--data-dir', dataDir, '--out', out, '--locales', 'fr', '--environment', 'staging', '--collections', 'person'], 'sqlite', env)).code, 0)
  t.match(JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8')), { locales: ['fr'], environment: 'staging', collections: ['person'], counts: { person: { fr: 1 } } })
  t.match(JSON.parse(readFileSync(path.join(out, 'content', 'person', 'fr', 'ada.json'), 'utf8')), { name: 'Adà' })
  t.match(await lectern(['export', '--data-dir', dataDir, '--out', out, '--collections', 'nope'], 'sqlite', env), { code: 1, err: /Unknown collection\(s\): nope/ })
  const fresh = path.join(tempDir(t), 'fresh')
  t.match(await lectern(['import', out, '--data-dir', fresh], 'sqlite', env), { code: 0, out: /1 created/ })
  t.match(await lectern(['validate', '--data-dir', fresh, '--environment', 'staging'], 'sqlite', env), { code: 0 })
  const app2 = await build(t, env, { dataDir: fresh })
  t.match((await app2.inject({ url: '/api/content/person/ada?_locale=fr&_environment=staging' })).json(), { name: 'Adà' }, 'imported into its locale and environment')
})

if (STORES.includes('postgres')) {
  t.test('postgres: an import beside a running replica; the schemas it writes reach the replica', async t => {
    const { dataDir } = await seeded(t, 'postgres')
    const out = path.join(tempDir(t), 'export')
    t.equal((await cli(t, ['export', '--data-dir', dataDir, '--out', out], 'postgres')).code, 0)
    // A replica on a database of its own and a types directory of its own, which the command shares.
    const replicaDir = path.join(tempDir(t), 'replica')
    const typesDir = path.join(tempDir(t), 'types')
    const shared: Env = { ...await storeEnv(t, 'postgres', replicaDir), CMS_TYPES_DIR: typesDir }
    const replica = await build(t, shared, { dataDir: replicaDir })
    t.strictSame(replica.schemas.names(), [])
    // While a replica holds the schema write lock, the command waits for it before writing files.
    const holder = new PostgresStore({ dataDir: replicaDir, databaseUrl: shared.CMS_DATABASE_URL })
    await holder.open()
    t.teardown(async () => { await holder.close() })
    let importing: Promise<Run> | undefined
    await new AdvisoryLock(holder, 'schemas').run(async () => {
      importing = lectern(['import', out, '--data-dir', path.join(tempDir(t), 'cli')], 'postgres', shared)
      const waiting = async (): Promise<boolean> => ((await holder.execute("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0] as { n: number }).n > 0
      while (!await waiting()) await new Promise(resolve => setTimeout(resolve, 20))
      t.strictSame(readdirSync(typesDir), [], 'nothing written while the lock is held')
    })
    const imported = await importing as Run
    t.match(imported, { code: 0, out: /imported: 4 created, 0 updated, 0 unchanged, 2 schemas/ })
    // Announced once the command's app is up: the replica reads the types directory again.
    const deadline = Date.now() + 5000
    while (replica.schemas.collection('article') === null && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
    t.strictSame(replica.schemas.names(), ['article', 'person'], 'the replica knows the imported schemas')
    t.equal((await replica.inject({ url: '/api/content/article/first' })).statusCode, 200, 'and serves the imported entries')
  })

  t.test('postgres: without CMS_DATABASE_URL the command says what is missing', async t => {
    const run = await lectern(['validate', '--data-dir', tempDir(t), '--store', 'postgres'])
    t.equal(run.code, 1)
    t.match(run.err, /CMS_DATABASE_URL/)
    t.notMatch(run.err, /\n\s+at /, 'no stack trace')
  })
}
