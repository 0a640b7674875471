import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { ADMIN_KEY, assertError, assertShape, auth, build, eachStore, EDITOR_KEY, KEYS_ENV, VIEWER_KEY } from '../helper.js'
import { AssetList, UploadReply } from '../../routes/api/assets/schemas.js'
import type { CmsEvent } from '../../types/events.js'
import { jpeg, png, SVG, upload } from '../lib/assets/fixtures.js'
import { SQLITE_FILE } from '../../lib/assets/sqlite-repository.js'

function events (app: FastifyInstance): CmsEvent[] {
  const seen: CmsEvent[] = []
  app.events.on(event => { seen.push(event) })
  return seen
}

/** Every file below `dir` (temp files included), relative. */
function filesUnder (dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter(e => e.isFile())
    .map(e => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort()
}

eachStore(t, async (t, store, env) => {
  t.test('uploads one file: record, file on disk, event', async t => {
    const app = await build(t, env)
    const seen = events(app)
    const image = await png(1600, 1200)
    // The client lies about the type; the content decides.
    const res = await upload(app, [{ name: 'My Photo.PNG', data: image, type: 'text/plain' }])
    t.equal(res.statusCode, 201)
    const body = res.json()
    assertShape(t, UploadReply, body)
    t.equal(body.items.length, 1)
    const asset = body.items[0]
    t.match(asset, {
      path: '/api/assets/my-photo.png',
      url: `${app.config.publicUrl}/api/assets/my-photo.png`,
      name: 'my-photo.png',
      folder: '',
      size: image.length,
      mime: 'image/png',
      width: 1600,
      height: 1200
    })
    t.ok(Date.now() - Date.parse(asset.created_at) < 60_000, 'created_at is now')
    const onDisk = path.join(app.config.assetsDir, 'my-photo.png')
    t.same(readFileSync(onDisk), image, 'the exact bytes are stored')
    t.same(filesUnder(app.config.assetsDir), ['my-photo.png'], 'no temp file is left')
    t.same(seen, [{ event: 'asset.created', path: '/api/assets/my-photo.png', environment: 'default', size: image.length, mime: 'image/png' }])
    // PostgreSQL keeps the records in the database, which every replica shares (contract §12).
    t.equal(existsSync(path.join(app.config.dataDir, SQLITE_FILE)), store === 'sqlite', `${store}: the data dir's asset database only with sqlite`)
  })

  t.test('uploads several files into a normalized folder; taken names get -1, -2', async t => {
    const app = await build(t, env)
    const seen = events(app)
    const a = await png(40, 30)
    const b = await jpeg(20, 10)
    const res = await upload(app, [
      { name: 'cat.png', data: a },
      { name: 'Dog Photo.jpg', data: b },
      { name: 'cat.png', data: a }
    ], { fields: { folder: 'Photos/Summer 2024' } })
    t.equal(res.statusCode, 201)
    assertShape(t, UploadReply, res.json())
    t.same(res.json().items.map((i: { path: string }) => i.path), [
      '/api/assets/photos/summer-2024/cat.png',
      '/api/assets/photos/summer-2024/dog-photo.jpg',
      '/api/assets/photos/summer-2024/cat-1.png'
    ])
    t.same(res.json().items.map((i: { folder: string }) => i.folder), ['photos/summer-2024', 'photos/summer-2024', 'photos/summer-2024'])
    t.same(res.json().items[1], { ...res.json().items[1], mime: 'image/jpeg', width: 20, height: 10 })

    const again = await upload(app, [{ name: 'CAT.png', data: a }], { fields: { folder: 'photos/summer-2024/' } })
    t.equal(again.statusCode, 201)
    t.equal(again.json().items[0].path, '/api/assets/photos/summer-2024/cat-2.png')
    t.equal(seen.length, 4, 'one asset.created per file')
    t.same(filesUnder(path.join(app.config.assetsDir, 'photos', 'summer-2024')), ['cat-1.png', 'cat-2.png', 'cat.png', 'dog-photo.jpg'])
  })

  t.test('lists with folder, mime, _q and paging, newest first', async t => {
    const app = await build(t, env)
    const image = await png(10, 10)
    // One request per file so the order of creation is certain.
    for (const [name, folder] of [['alpha.png', 'a'], ['beta.png', 'a'], ['Gamma.txt', 'a'], ['delta.png', 'b'], ['alphabet.txt', '']] as const) {
      const data = name.endsWith('.txt') ? Buffer.from('text') : image
      const res = await upload(app, [{ name, data }], { fields: folder === '' ? {} : { folder } })
      t.equal(res.statusCode, 201)
    }
    const list = async (query: string): Promise<{ items: Array<{ name: string }>, total: number, page: number, per_page: number, pages: number }> => {
      const res = await app.inject({ url: `/api/assets${query}` })
      t.equal(res.statusCode, 200, query)
      assertShape(t, AssetList, res.json())
      return res.json()
    }
    const names = (body: { items: Array<{ name: string }> }): string[] => body.items.map(i => i.name)

    const all = await list('')
    t.same(names(all), ['alphabet.txt', 'delta.png', 'gamma.txt', 'beta.png', 'alpha.png'], 'newest first')
    t.match(all, { total: 5, page: 1, per_page: 20, pages: 1 })
    t.same(names(await list('?folder=a')), ['gamma.txt', 'beta.png', 'alpha.png'])
    t.same(names(await list('?folder=')), ['alphabet.txt'], "folder '' is the root only")
    t.same(names(await list('?folder=A/')), ['gamma.txt', 'beta.png', 'alpha.png'], 'the filter is normalized like the upload')
    t.same(names(await list('?mime=image/')), ['delta.png', 'beta.png', 'alpha.png'])
    t.same(names(await list('?mime=TEXT/plain')), ['alphabet.txt', 'gamma.txt'])
    t.same(names(await list('?_q=ALPHA')), ['alphabet.txt', 'alpha.png'], '_q is case-insensitive')
    t.same(names(await list('?_q=alpha&mime=image/')), ['alpha.png'])

    const page2 = await list('?_per_page=2&_page=2')
    t.same(names(page2), ['gamma.txt', 'beta.png'])
    t.match(page2, { total: 5, page: 2, per_page: 2, pages: 3 })
    const page3 = await list('?_per_page=2&_page=3')
    t.same(names(page3), ['alpha.png'])
    const beyond = await list('?_per_page=2&_page=9')
    t.same(beyond.items, [])
    t.equal(beyond.total, 5)
    const empty = await list('?folder=nothing-here')
    t.match(empty, { items: [], total: 0, pages: 0 })

    for (const bad of ['_per_page=0', '_per_page=1001', '_page=0', '_page=x', 'folder=../x', 'folder=%2e%2e/x', 'folder=a%5Cb']) {
      assertError(t, await app.inject({ url: `/api/assets?${bad}` }), 400, 'BAD_REQUEST')
    }
  })

  t.test('serves a file: type, ETag, Last-Modified, ranges, 304, 404', async t => {
    const app = await build(t, env)
    const image = await png(64, 48)
    await upload(app, [{ name: 'pic.png', data: image }, { name: 'logo.svg', data: SVG }], { fields: { folder: 'media' } })

    const full = await app.inject({ url: '/api/assets/media/pic.png' })
    t.equal(full.statusCode, 200)
    t.equal(full.headers['content-type'], 'image/png')
    t.equal(full.headers['x-content-type-options'], 'nosniff')
    t.equal(full.headers['accept-ranges'], 'bytes')
    t.ok(full.headers['last-modified'], 'Last-Modified')
    const etag = full.headers.etag
    t.type(etag, 'string')
    t.same(full.rawPayload, image)

    const part = await app.inject({ url: '/api/assets/media/pic.png', headers: { range: 'bytes=10-19' } })
    t.equal(part.statusCode, 206)
    t.equal(part.headers['content-range'], `bytes 10-19/${image.length}`)
    t.same(part.rawPayload, image.subarray(10, 20))

    const tail = await app.inject({ url: '/api/assets/media/pic.png', headers: { range: 'bytes=-5' } })
    t.equal(tail.statusCode, 206)
    t.same(tail.rawPayload, image.subarray(image.length - 5))

    const cached = await app.inject({ url: '/api/assets/media/pic.png', headers: { 'if-none-match': String(etag) } })
    t.equal(cached.statusCode, 304)
    t.equal(cached.body, '')
    t.equal(cached.headers['content-type'], undefined, 'a 304 has no Content-Type')

    const unsatisfiable = await app.inject({ url: '/api/assets/media/pic.png', headers: { range: `bytes=${image.length + 10}-` } })
    assertError(t, unsatisfiable, 416, 'RANGE_NOT_SATISFIABLE')
    t.equal(unsatisfiable.headers['content-range'], `bytes */${image.length}`)

    const head = await app.inject({ method: 'HEAD', url: '/api/assets/media/pic.png' })
    t.equal(head.statusCode, 200)
    t.equal(head.headers['content-length'], String(image.length))

    const svg = await app.inject({ url: '/api/assets/media/logo.svg' })
    t.equal(svg.statusCode, 200)
    t.equal(svg.headers['content-type'], 'image/svg+xml')
    t.match(String(svg.headers['content-security-policy']), /sandbox/, 'an SVG cannot run scripts in our origin')

    assertError(t, await app.inject({ url: '/api/assets/media/nope.png' }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ url: '/api/assets/nope/pic.png' }), 404, 'NOT_FOUND')
  })

  t.test('deletes a file, its metadata and its variants', async t => {
    const app = await build(t, env)
    const seen = events(app)
    const image = await png(300, 200)
    await upload(app, [{ name: 'gone.png', data: image }, { name: 'kept.png', data: image }], { fields: { folder: 'x' } })
    t.equal((await app.inject({ url: '/api/transform/x/gone.png?w=100&format=webp' })).statusCode, 200)
    t.equal((await app.inject({ url: '/api/transform/x/gone.png?w=50&format=png' })).statusCode, 200)
    t.equal((await app.inject({ url: '/api/transform/x/kept.png?w=50' })).statusCode, 200)
    const cacheDir = path.join(app.config.dataDir, 'cache', 'transforms')
    t.equal(filesUnder(cacheDir).length, 3)

    const res = await app.inject({ method: 'DELETE', url: '/api/assets/x/gone.png' })
    t.equal(res.statusCode, 204)
    t.equal(res.body, '')
    t.notOk(existsSync(path.join(app.config.assetsDir, 'x', 'gone.png')), 'the file is gone')
    t.equal(filesUnder(cacheDir).length, 1, "only the other asset's variant is left")
    assertError(t, await app.inject({ url: '/api/assets/x/gone.png' }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ url: '/api/transform/x/gone.png?w=100&format=webp' }), 404, 'NOT_FOUND')
    const list = await app.inject({ url: '/api/assets' })
    t.same(list.json().items.map((i: { name: string }) => i.name), ['kept.png'])
    t.same(seen.filter(e => e.event === 'asset.deleted'), [
      { event: 'asset.deleted', path: '/api/assets/x/gone.png', environment: 'default', size: image.length, mime: 'image/png' }
    ])
    assertError(t, await app.inject({ method: 'DELETE', url: '/api/assets/x/gone.png' }), 404, 'NOT_FOUND')
    // The name is free again.
    const again = await upload(app, [{ name: 'gone.png', data: image }], { fields: { folder: 'x' } })
    t.equal(again.json().items[0].path, '/api/assets/x/gone.png')
  })

  t.test('a file over CMS_UPLOAD_LIMIT is a 413 and leaves nothing behind', async t => {
    const app = await build(t, { ...env, CMS_UPLOAD_LIMIT: '2000' })
    const seen = events(app)
    const small = Buffer.alloc(1500, 'a')
    const big = Buffer.alloc(5000, 'b')
    assertError(t, await upload(app, [{ name: 'big.txt', data: big }]), 413, 'PAYLOAD_TOO_LARGE')
    assertError(t, await upload(app, [{ name: 'small.txt', data: small }, { name: 'big.txt', data: big }], { fields: { folder: 'f' } }), 413, 'PAYLOAD_TOO_LARGE')
    t.same(filesUnder(app.config.assetsDir), [], 'no file and no temp file remain')
    t.equal((await app.inject({ url: '/api/assets' })).json().total, 0)
    t.same(seen, [], 'no event for a failed upload')
    const ok = await upload(app, [{ name: 'small.txt', data: small }])
    t.equal(ok.statusCode, 201, 'a file within the limit is fine')
  })

  t.test('the metadata survives a restart', async t => {
    const first = await build(t, env, { keepOpen: true })
    const dataDir = first.config.dataDir
    await upload(first, [{ name: 'one.png', data: await png(20, 20) }], { fields: { folder: 'k' } })
    await first.close()
    const second = await build(t, env, { dataDir })
    const list = await second.inject({ url: '/api/assets' })
    t.same(list.json().items.map((i: { path: string, width: number }) => [i.path, i.width]), [['/api/assets/k/one.png', 20]])
  })
})

t.test('auth: writes need AssetsWrite, reads are open', async t => {
  const app = await build(t, KEYS_ENV)
  const image = await png(10, 10)
  const anonymous = await upload(app, [{ name: 'a.png', data: image }])
  assertError(t, anonymous, 401, 'UNAUTHORIZED')
  t.equal(anonymous.headers['www-authenticate'], 'Bearer')
  assertError(t, await upload(app, [{ name: 'a.png', data: image }], { headers: auth('not-a-valid-key-at-all') }), 401, 'UNAUTHORIZED')
  assertError(t, await upload(app, [{ name: 'a.png', data: image }], { headers: auth(VIEWER_KEY) }), 403, 'FORBIDDEN')
  const byEditor = await upload(app, [{ name: 'a.png', data: image }], { headers: auth(EDITOR_KEY) })
  t.equal(byEditor.statusCode, 201)
  assertShape(t, UploadReply, byEditor.json())
  t.same(filesUnder(app.config.assetsDir), ['a.png'], 'refused uploads stored nothing')

  t.equal((await app.inject({ url: '/api/assets' })).statusCode, 200, 'list without a key')
  t.equal((await app.inject({ url: '/api/assets/a.png' })).statusCode, 200, 'download without a key')
  t.equal((await app.inject({ url: '/api/transform/a.png?w=5' })).statusCode, 200, 'transform without a key')

  assertError(t, await app.inject({ method: 'DELETE', url: '/api/assets/a.png' }), 401, 'UNAUTHORIZED')
  assertError(t, await app.inject({ method: 'DELETE', url: '/api/assets/a.png', headers: auth(VIEWER_KEY) }), 403, 'FORBIDDEN')
  t.equal((await app.inject({ method: 'DELETE', url: '/api/assets/a.png', headers: { 'x-api-key': ADMIN_KEY } })).statusCode, 204)
})

t.test('environments: each has its own directory, list and URLs', async t => {
  const app = await build(t, { CMS_ENVIRONMENTS: 'prod,staging' })
  const seen = events(app)
  const image = await png(10, 10)
  const staged = await upload(app, [{ name: 'hero.png', data: image }], { query: '_environment=staging', fields: { folder: 'home' } })
  t.equal(staged.statusCode, 201)
  assertShape(t, UploadReply, staged.json())
  t.match(staged.json().items[0], {
    path: '/api/assets/home/hero.png',
    url: `${app.config.publicUrl}/api/assets/home/hero.png?_environment=staging`
  })
  t.ok(existsSync(path.join(app.config.assetsDir, 'staging', 'home', 'hero.png')))
  const live = await upload(app, [{ name: 'hero.png', data: image }])
  t.equal(live.json().items[0].url, `${app.config.publicUrl}/api/assets/hero.png`, 'the default environment has no parameter')
  t.ok(existsSync(path.join(app.config.assetsDir, 'prod', 'hero.png')))
  t.same(seen.map(e => (e as { environment: string }).environment), ['staging', 'prod'])

  t.same((await app.inject({ url: '/api/assets' })).json().items.map((i: { path: string }) => i.path), ['/api/assets/hero.png'])
  t.same((await app.inject({ url: '/api/assets?_environment=staging' })).json().items.map((i: { path: string }) => i.path), ['/api/assets/home/hero.png'])
  assertError(t, await app.inject({ url: '/api/assets/home/hero.png' }), 404, 'NOT_FOUND')
  t.equal((await app.inject({ url: '/api/assets/home/hero.png?_environment=staging' })).statusCode, 200)
  t.equal((await app.inject({ url: '/api/transform/home/hero.png?w=4&_environment=staging' })).statusCode, 200)
  assertError(t, await app.inject({ url: '/api/transform/home/hero.png?w=4' }), 404, 'NOT_FOUND')
  assertError(t, await app.inject({ method: 'DELETE', url: '/api/assets/home/hero.png' }), 404, 'NOT_FOUND')
  t.equal((await app.inject({ method: 'DELETE', url: '/api/assets/home/hero.png?_environment=staging' })).statusCode, 204)
  t.ok(existsSync(path.join(app.config.assetsDir, 'prod', 'hero.png')), 'the other environment is untouched')
})

t.test('the folder field may come after the files', async t => {
  const app = await build(t)
  const res = await upload(app, [{ name: 'a.png', data: await png(10, 10) }], { fields: { folder: 'late' }, fieldsLast: true })
  t.equal(res.statusCode, 201)
  t.equal(res.json().items[0].path, '/api/assets/late/a.png')
  t.same(filesUnder(app.config.assetsDir), ['late/a.png'], 'the staged file was moved, nothing left behind')
})

t.test('the MIME type comes from the content, never from the client', async t => {
  const app = await build(t)
  const res = await upload(app, [
    { name: 'photo.txt', data: await jpeg(8, 8), type: 'text/plain' },
    { name: 'notes.txt', data: Buffer.from('hello\nworld\n'), type: 'image/png' },
    { name: 'logo.svg', data: SVG, type: 'application/octet-stream' },
    { name: 'data.json', data: Buffer.from('{"a": [1, 2]}'), type: 'text/html' },
    { name: 'table.csv', data: Buffer.from('a,b\n1,2\n'), type: 'image/png' },
    { name: 'page.html', data: Buffer.from('<html><script>alert(1)</script></html>'), type: 'text/html' },
    { name: 'fake.png', data: Buffer.from('<script>alert(1)</script>'), type: 'image/png' },
    { name: 'fake.svg', data: Buffer.from('just text'), type: 'image/svg+xml' },
    { name: 'binary.txt', data: Buffer.from([0, 1, 2, 3, 0xff, 0xfe]), type: 'text/plain' }
  ])
  t.equal(res.statusCode, 201)
  assertShape(t, UploadReply, res.json())
  const byName = Object.fromEntries(res.json().items.map((i: { name: string, mime: string, width: number | null }) => [i.name, [i.mime, i.width]]))
  t.same(byName, {
    'photo.txt': ['image/jpeg', 8],
    'notes.txt': ['text/plain', null],
    'logo.svg': ['image/svg+xml', 120],
    'data.json': ['application/json', null],
    'table.csv': ['text/csv', null],
    'page.html': ['application/octet-stream', null],
    'fake.png': ['application/octet-stream', null],
    'fake.svg': ['application/octet-stream', null],
    'binary.txt': ['application/octet-stream', null]
  })
})

t.test('bad upload requests', async t => {
  const app = await build(t)
  const image = await png(10, 10)
  assertError(t, await app.inject({ method: 'POST', url: '/api/assets', payload: { file: 'x' } }), 415, 'UNSUPPORTED_MEDIA_TYPE')
  assertError(t, await upload(app, [], { fields: { folder: 'a' } }), 400, 'BAD_REQUEST')
  assertError(t, await upload(app, [{ name: 'a.png', data: image, field: 'upload' }]), 400, 'BAD_REQUEST')
  assertError(t, await upload(app, [{ name: 'a.png', data: image }], { fields: { title: 'x' } }), 400, 'BAD_REQUEST')
  assertError(t, await upload(app, [{ name: '!!!.png', data: image }]), 400, 'BAD_REQUEST')
  // Two folder fields: which one was meant?
  const form = new FormData()
  form.append('folder', 'a')
  form.append('folder', 'b')
  form.append('file', new Blob([image]), 'a.png')
  const res = new Response(form)
  assertError(t, await app.inject({
    method: 'POST', url: '/api/assets', payload: Buffer.from(await res.arrayBuffer()), headers: { 'content-type': res.headers.get('content-type') ?? '' }
  }), 400, 'BAD_REQUEST')
  t.same(filesUnder(app.config.assetsDir), [])
})
