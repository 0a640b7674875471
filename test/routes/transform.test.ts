import { existsSync, readdirSync } from 'node:fs'
import { utimes } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import sharp from 'sharp'
import type { FastifyInstance } from 'fastify'
import { ADMIN_KEY, assertError, assertShape, auth, build, eachStore, EDITOR_KEY, KEYS_ENV, VIEWER_KEY } from '../helper.js'
import { InvalidateReply } from '../../routes/api/transform/cache/invalidate/schemas.js'
import { png, upload } from '../lib/assets/fixtures.js'

interface Answer {
  statusCode: number
  headers: Record<string, unknown>
  rawPayload: Buffer
}

async function get (app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return await app.inject({ url, headers })
}

async function size (body: Buffer): Promise<{ width?: number, height?: number, format?: string }> {
  const meta = await sharp(body).metadata()
  return { width: meta.width, height: meta.height, format: meta.format }
}

function variantFiles (app: FastifyInstance): string[] {
  const dir = path.join(app.config.dataDir, 'cache', 'transforms')
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter(e => e.isFile()).map(e => e.name)
}

/** An app with a 1600×1200 PNG at photos/big.png. */
async function withPhoto (t: Parameters<Parameters<typeof eachStore>[1]>[0], env: Record<string, string> = {}): Promise<FastifyInstance> {
  const app = await build(t, env)
  const res = await upload(app, [{ name: 'big.png', data: await png(1600, 1200) }], { fields: { folder: 'photos' } })
  t.equal(res.statusCode, 201)
  return app
}

t.test('resizes and encodes: dimensions, formats, headers', async t => {
  const app = await withPhoto(t)
  const res = await get(app, '/api/transform/photos/big.png?w=400&format=webp')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'image/webp')
  t.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable')
  t.match(String(res.headers.etag), /^"[0-9a-f]{32}"$/)
  t.equal(res.headers.vary, undefined, 'no Vary without format=auto')
  t.equal(res.headers['content-length'], String(res.rawPayload.length))
  t.same(await size(res.rawPayload), { width: 400, height: 300, format: 'webp' })

  const formats: Array<[string, string, string]> = [['webp', 'image/webp', 'webp'], ['avif', 'image/avif', 'heif'], ['jpeg', 'image/jpeg', 'jpeg'], ['png', 'image/png', 'png']]
  for (const [format, mime, sharpFormat] of formats) {
    const r = await get(app, `/api/transform/photos/big.png?w=160&h=90&fit=fill&format=${format}&q=60`)
    t.equal(r.statusCode, 200, format)
    t.equal(r.headers['content-type'], mime)
    t.same(await size(r.rawPayload), { width: 160, height: 90, format: sharpFormat }, `${format} is really ${format}`)
  }

  const fits: Array<[string, number, number]> = [['cover', 200, 200], ['contain', 200, 200], ['fill', 200, 200], ['inside', 200, 150], ['outside', 267, 200]]
  for (const [fit, width, height] of fits) {
    const r = await get(app, `/api/transform/photos/big.png?w=200&h=200&fit=${fit}&format=png`)
    t.same(await size(r.rawPayload), { width, height, format: 'png' }, `fit=${fit}`)
  }

  const byHeight = await get(app, '/api/transform/photos/big.png?h=120')
  t.same(await size(byHeight.rawPayload), { width: 160, height: 120, format: 'png' }, "h alone keeps the ratio; no format keeps the source's")
  const larger = await get(app, '/api/transform/photos/big.png?w=4000&format=jpeg')
  t.same(await size(larger.rawPayload), { width: 1600, height: 1200, format: 'jpeg' }, 'never enlarged')
  const same = await get(app, '/api/transform/photos/big.png?format=jpeg&q=50')
  t.same(await size(same.rawPayload), { width: 1600, height: 1200, format: 'jpeg' }, 'a format change alone')
})

t.test('format=auto follows Accept and says Vary: Accept', async t => {
  const app = await withPhoto(t)
  const url = '/api/transform/photos/big.png?w=100&format=auto'
  const avif = await get(app, url, { accept: 'image/avif,image/webp,image/apng,*/*;q=0.8' })
  t.equal(avif.headers['content-type'], 'image/avif')
  t.equal(avif.headers.vary, 'Accept')
  t.equal((await size(avif.rawPayload)).format, 'heif')
  const webp = await get(app, url, { accept: 'image/webp,*/*' })
  t.equal(webp.headers['content-type'], 'image/webp')
  t.equal((await size(webp.rawPayload)).format, 'webp')
  const refused = await get(app, url, { accept: 'image/avif;q=0, image/webp' })
  t.equal(refused.headers['content-type'], 'image/webp', 'q=0 refuses a type')
  const plain = await get(app, url, { accept: '*/*' })
  t.equal(plain.headers['content-type'], 'image/png', "a wildcard gets the source's format")
  const none = await get(app, url)
  t.equal(none.headers['content-type'], 'image/png')
  t.equal(none.headers.vary, 'Accept')
  t.equal(new Set([avif.headers.etag, webp.headers.etag, plain.headers.etag]).size, 3, 'one ETag per format')
  t.equal(plain.headers.etag, none.headers.etag, 'the same variant has the same ETag')
})

t.test('each variant is computed once: cache hits, concurrent first requests, 304', async t => {
  const app = await withPhoto(t)
  const stats = app.transforms.stats
  const url = '/api/transform/photos/big.png?w=300&format=webp'
  const first = await get(app, url)
  t.equal(stats.computed, 1)
  const second = await get(app, url)
  t.equal(stats.computed, 1, 'the second request is a cache hit')
  t.equal(stats.hits, 1)
  t.same(second.rawPayload, first.rawPayload)
  t.equal(second.headers.etag, first.headers.etag)
  t.same(variantFiles(app), ['w300-h0-cover-qd.webp'])

  // Equal parameters in another spelling are the same variant.
  await get(app, '/api/transform/photos/big.png?format=webp&w=300&fit=contain')
  t.equal(stats.computed, 1, 'fit without both sides does not make a new variant')

  const notModified = await get(app, url, { 'if-none-match': String(first.headers.etag) })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.rawPayload.length, 0)
  t.equal(notModified.headers.etag, first.headers.etag)
  t.equal(notModified.headers['cache-control'], 'public, max-age=31536000, immutable')
  const listed = await get(app, url, { 'if-none-match': `"nope", W/${String(first.headers.etag)}` })
  t.equal(listed.statusCode, 304, 'a list of tags and a weak prefix match')
  const other = await get(app, url, { 'if-none-match': '"something-else"' })
  t.equal(other.statusCode, 200)

  // A 304 for a variant never computed needs no computation either.
  const fresh = '/api/transform/photos/big.png?w=222&format=webp'
  const before = stats.computed
  const probe = await app.transforms.prepare('default', 'photos/big.png', { w: 222, format: 'webp' }, undefined)
  t.equal((await get(app, fresh, { 'if-none-match': probe.etag })).statusCode, 304)
  t.equal(stats.computed, before, 'answered from the key alone')

  const concurrent = '/api/transform/photos/big.png?w=640&h=480&fit=inside&format=avif'
  const computedBefore = stats.computed
  const answers = await Promise.all(Array.from({ length: 8 }, async () => await get(app, concurrent)))
  t.ok(answers.every(a => a.statusCode === 200), 'all answered')
  t.equal(stats.computed, computedBefore + 1, 'eight concurrent first requests compute it once')
  t.ok(answers.every(a => a.rawPayload.equals(answers[0]?.rawPayload ?? Buffer.alloc(0))), 'all got the same bytes')
  t.ok(stats.shared >= 1, 'the others waited for the one computation')
})

t.test('replacing the source makes new variants and drops the old ones', async t => {
  const app = await withPhoto(t)
  const url = '/api/transform/photos/big.png?w=100&format=webp'
  const before = await get(app, url)
  t.equal(app.transforms.stats.computed, 1)
  // The same bytes with a new modification time: a replaced file, as far as the cache can tell.
  const file = path.join(app.config.assetsDir, 'photos', 'big.png')
  const later = new Date(Date.now() + 60_000)
  await utimes(file, later, later)
  // A change behind the API's back is noticed within a second (the locate cache); forgetting
  // the path stands in for that second passing.
  app.assets.forget('default', 'photos/big.png')
  const after = await get(app, url)
  t.equal(after.statusCode, 200)
  t.equal(app.transforms.stats.computed, 2, 'recomputed')
  t.not(after.headers.etag, before.headers.etag, 'a new ETag')
  t.equal(variantFiles(app).length, 1, 'the variant of the old source was pruned')
})

t.test('bad parameters are 400, non-images 415, missing 404', async t => {
  const app = await withPhoto(t)
  await upload(app, [{ name: 'notes.txt', data: Buffer.from('hello') }, { name: 'fake.png', data: Buffer.from('not an image') }])
  for (const query of ['w=0', 'w=4001', 'h=0', 'h=4001', 'w=abc', 'w=1.5', 'fit=crop', 'format=gif', 'format=', 'q=0', 'q=101', 'q=x']) {
    assertError(t, await app.inject({ url: `/api/transform/photos/big.png?${query}` }), 400, 'BAD_REQUEST')
  }
  t.equal((await get(app, '/api/transform/photos/big.png?w=4000&h=1&q=1&fit=fill')).statusCode, 200, 'the bounds themselves are fine')
  assertError(t, await app.inject({ url: '/api/transform/notes.txt?w=10' }), 415, 'UNSUPPORTED_MEDIA_TYPE')
  assertError(t, await app.inject({ url: '/api/transform/fake.png?w=10' }), 415, 'UNSUPPORTED_MEDIA_TYPE')
  assertError(t, await app.inject({ url: '/api/transform/photos/missing.png?w=10' }), 404, 'NOT_FOUND')
})

eachStore(t, async (t, _store, env) => {
  t.test('invalidate: everything, or one asset', async t => {
    const app = await withPhoto(t, env)
    await upload(app, [{ name: 'small.png', data: await png(200, 100) }])
    for (const w of [10, 20, 30]) await get(app, `/api/transform/photos/big.png?w=${w}`)
    for (const w of [10, 20]) await get(app, `/api/transform/small.png?w=${w}`)
    t.equal(variantFiles(app).length, 5)

    const one = await app.inject({ method: 'POST', url: '/api/transform/cache/invalidate', payload: { path: '/api/assets/photos/big.png' } })
    t.equal(one.statusCode, 200)
    assertShape(t, InvalidateReply, one.json())
    t.same(one.json(), { removed: 3 })
    t.equal(variantFiles(app).length, 2, "the other asset's variants stay")
    const computed = app.transforms.stats.computed
    await get(app, '/api/transform/small.png?w=10')
    t.equal(app.transforms.stats.computed, computed, 'still cached')
    await get(app, '/api/transform/photos/big.png?w=10')
    t.equal(app.transforms.stats.computed, computed + 1, 'recomputed after the flush')

    const unknown = await app.inject({ method: 'POST', url: '/api/transform/cache/invalidate', payload: { path: '/api/assets/none.png' } })
    t.same(unknown.json(), { removed: 0 })

    const all = await app.inject({ method: 'POST', url: '/api/transform/cache/invalidate', payload: {} })
    t.equal(all.statusCode, 200)
    assertShape(t, InvalidateReply, all.json())
    t.same(all.json(), { removed: 3 })
    t.same(variantFiles(app), [])
    const empty = await app.inject({ method: 'POST', url: '/api/transform/cache/invalidate' })
    t.equal(empty.statusCode, 200, 'no body at all means {}')
    t.same(empty.json(), { removed: 0 })
    t.equal((await get(app, '/api/transform/small.png?w=20')).statusCode, 200, 'transforms work after a flush')

    for (const payload of [{ path: 'photos/big.png' }, { path: '/api/assets/../x' }, { path: '/api/assets/a\\b' }, { path: 7 }, { other: 1 }]) {
      assertError(t, await app.inject({ method: 'POST', url: '/api/transform/cache/invalidate', payload }), 400, 'BAD_REQUEST')
    }
  })
})

t.test('invalidate needs AssetsWrite', async t => {
  const app = await build(t, KEYS_ENV)
  const url = '/api/transform/cache/invalidate'
  assertError(t, await app.inject({ method: 'POST', url, payload: {} }), 401, 'UNAUTHORIZED')
  assertError(t, await app.inject({ method: 'POST', url, payload: {}, headers: auth(VIEWER_KEY) }), 403, 'FORBIDDEN')
  for (const key of [EDITOR_KEY, ADMIN_KEY]) {
    const res = await app.inject({ method: 'POST', url, payload: {}, headers: auth(key) })
    t.equal(res.statusCode, 200)
    assertShape(t, InvalidateReply, res.json())
  }
})

t.test('environments: variants are kept per environment', async t => {
  const app = await build(t, { CMS_ENVIRONMENTS: 'live,draft' })
  const image = await png(100, 100)
  await upload(app, [{ name: 'a.png', data: image }])
  await upload(app, [{ name: 'a.png', data: await png(50, 50) }], { query: '_environment=draft' })
  const live = await get(app, '/api/transform/a.png?w=40&format=png')
  const draft = await get(app, '/api/transform/a.png?w=40&format=png&_environment=draft')
  t.equal(live.statusCode, 200)
  t.equal(draft.statusCode, 200)
  t.not(live.headers.etag, draft.headers.etag)
  const res = await app.inject({ method: 'POST', url: '/api/transform/cache/invalidate?_environment=draft', payload: { path: '/api/assets/a.png' } })
  t.same(res.json(), { removed: 1 }, "only the draft environment's variant")
  t.equal(variantFiles(app).length, 1)
})
