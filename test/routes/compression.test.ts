// Compression through the API (contract §11) on both stores: content reads cached and not,
// If-None-Match across encodings, small answers, assets and image variants, CMS_COMPRESSION=false.
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { build, eachStore, type Env } from '../helper.js'
import { png, upload } from '../lib/assets/fixtures.js'

const LONG_BODY = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(40)

/** An app with a `notes` collection: one entry of 2 KB or more (`long`) and one of a few bytes (`short`). */
async function withNotes (t: Test, env: Env): Promise<FastifyInstance> {
  const app = await build(t, env)
  const schema = await app.inject({ method: 'POST', url: '/api/schemas', payload: { name: 'notes', fields: { title: { field_type: 'string' }, body: { field_type: 'text' } } } })
  t.equal(schema.statusCode, 201)
  for (const [slug, body] of [['long', LONG_BODY], ['short', '']]) {
    t.equal((await app.inject({ method: 'POST', url: '/api/content/notes', payload: { _slug: slug, title: slug, body } })).statusCode, 201)
  }
  return app
}

function decoded (res: LightMyRequestResponse): string {
  const encoding = res.headers['content-encoding']
  if (encoding === 'br') return brotliDecompressSync(res.rawPayload).toString()
  if (encoding === 'gzip') return gunzipSync(res.rawPayload).toString()
  return res.body
}

const accepting = (encoding: string): Record<string, string> => ({ 'accept-encoding': encoding })

/** A content read: br, gzip and identity answers carry the same body and ETag; 304 across encodings. */
async function checkRead (t: Test, app: FastifyInstance, url: string): Promise<void> {
  const plain = await app.inject({ url })
  t.equal(plain.statusCode, 200)
  t.equal(plain.headers['content-encoding'], undefined, `${url}: no Accept-Encoding, no encoding`)
  t.equal(plain.headers.vary, 'accept-encoding', `${url}: Vary even then`)
  t.ok(plain.rawPayload.length >= 1024, `${url}: ${plain.rawPayload.length} bytes`)
  // Twice each: a miss then (cache on) a hit, which sends the compressed copy kept with the answer.
  for (const [accept, encoding] of [['gzip, deflate, br', 'br'], ['gzip', 'gzip'], ['gzip, deflate, br', 'br'], ['gzip', 'gzip']]) {
    const res = await app.inject({ url, headers: accepting(accept as string) })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-encoding'], encoding, `${url}: ${encoding as string}`)
    t.equal(res.headers.vary, 'accept-encoding')
    t.equal(res.headers.etag, plain.headers.etag, 'the ETag of the uncompressed body')
    t.equal(res.headers['content-length'], String(res.rawPayload.length))
    t.ok(res.rawPayload.length < plain.rawPayload.length / 2, 'smaller')
    t.equal(decoded(res), plain.body)
  }
  const etag = String(plain.headers.etag)
  for (const accept of ['br', 'gzip', 'identity']) {
    const notModified = await app.inject({ url, headers: { ...accepting(accept), 'if-none-match': etag } })
    t.equal(notModified.statusCode, 304, `${url}: the tag matches with Accept-Encoding: ${accept}`)
    t.equal(notModified.rawPayload.length, 0)
    t.equal(notModified.headers['content-encoding'], undefined)
  }
  const head = await app.inject({ method: 'HEAD', url, headers: accepting('br') })
  t.equal(head.statusCode, 200)
  t.equal(head.rawPayload.length, 0)
  t.equal(head.headers['content-encoding'], 'br')
}

eachStore(t, async (t, _store, env) => {
  for (const cache of ['on', 'off']) {
    t.test(`content reads with the cache ${cache}: br or gzip from 1 KB, one ETag for every encoding`, async t => {
      const app = await withNotes(t, { ...env, ...(cache === 'off' ? { CMS_CACHE_MAX: '0' } : {}) })
      for (const url of ['/api/content/notes/long', '/api/content/notes?_sort=title']) {
        const hits = app.responseCache.stats.hits
        await checkRead(t, app, url)
        if (cache === 'on') t.ok(app.responseCache.stats.hits >= hits + 5, `${url}: the repeated reads were hits`)
        else t.equal(app.responseCache.stats.hits, 0)
      }
      const short = await app.inject({ url: '/api/content/notes/short', headers: accepting('br') })
      t.equal(short.statusCode, 200)
      t.ok(short.rawPayload.length < 1024)
      t.equal(short.headers['content-encoding'], undefined, 'under 1 KB: as it is')
      t.equal(short.headers.vary, undefined)
    })
  }

  t.test('other answers: JSON documents compressed; images as they are, text files compressed', async t => {
    const app = await build(t, env)
    const doc = await app.inject({ url: '/api/openapi.json', headers: accepting('br') })
    t.equal(doc.headers['content-encoding'], 'br')
    t.match(JSON.parse(decoded(doc)), { openapi: /^3\./ })
    const csv = `slug,title\n${Array.from({ length: 200 }, (_, i) => `entry-${i},Entry ${i}`).join('\n')}\n`
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">${'<rect width="1" height="1"/>'.repeat(100)}</svg>`
    const uploaded = await upload(app, [{ name: 'photo.png', data: await png(400, 300) }, { name: 'rows.csv', data: Buffer.from(csv) }, { name: 'shape.svg', data: Buffer.from(svg) }])
    t.equal(uploaded.statusCode, 201)
    for (const url of ['/api/assets/photo.png', '/api/assets/shape.svg', '/api/transform/photo.png?w=200&format=png']) {
      const res = await app.inject({ url, headers: accepting('gzip, deflate, br') })
      t.equal(res.statusCode, 200, url)
      t.ok(res.rawPayload.length >= 1024, `${url}: ${res.rawPayload.length} bytes`)
      t.equal(res.headers['content-encoding'], undefined, `${url}: an image is sent as it is`)
    }
    const rows = await app.inject({ url: '/api/assets/rows.csv', headers: accepting('gzip') })
    t.equal(rows.headers['content-encoding'], 'gzip', 'a text file is compressed')
    t.equal(rows.headers.vary, 'accept-encoding')
    t.equal(decoded(rows), csv)
    const part = await app.inject({ url: '/api/assets/rows.csv', headers: { ...accepting('gzip'), range: 'bytes=0-9' } })
    t.equal(part.statusCode, 206)
    t.equal(part.headers['content-encoding'], undefined, 'a range is of the file as stored')
    t.equal(part.body, csv.slice(0, 10))
  })

  t.test('CMS_COMPRESSION=false: every answer as it is, no Vary', async t => {
    const app = await withNotes(t, { ...env, CMS_COMPRESSION: 'false' })
    for (const url of ['/api/content/notes/long', '/api/content/notes/long', '/api/content/notes?_sort=title', '/api/openapi.json']) {
      const res = await app.inject({ url, headers: accepting('gzip, deflate, br') })
      t.equal(res.statusCode, 200)
      t.equal(res.headers['content-encoding'], undefined, url)
      t.equal(res.headers.vary, undefined, url)
    }
  })
})
