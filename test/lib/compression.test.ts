import { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import t from 'tap'
import { acceptedEncoding, compress, compressibleType, compressStream, CompressedCopies, MIN_COMPRESSED_BYTES } from '../../lib/compression.js'

const decode = (bytes: Buffer, encoding: 'br' | 'gzip'): string => (encoding === 'br' ? brotliDecompressSync(bytes) : gunzipSync(bytes)).toString()

t.test('acceptedEncoding: br first, then gzip, by the q-values of Accept-Encoding', async t => {
  const cases: Array<[string | undefined, 'br' | 'gzip' | null]> = [
    [undefined, null],
    ['', null],
    ['identity', null],
    ['deflate', null],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=0.8, br;q=0.5', 'gzip'],
    ['gzip;q=0, br;q=0', null],
    ['*', 'br'],
    ['GZIP', 'gzip'],
    ['x-gzip', 'gzip'],
    ['Br;Q=1, gzip', 'br']
  ]
  for (const [header, expected] of cases) t.equal(acceptedEncoding(header), expected, `${String(header)} → ${String(expected)}`)
})

t.test('compressibleType: text, JSON, JavaScript, XML; not images, archives or binary', async t => {
  for (const type of ['application/json; charset=utf-8', 'application/json', 'text/html; charset=utf-8', 'text/plain', 'text/css', 'text/csv',
    'text/javascript', 'application/javascript', 'application/xml', 'application/problem+json', 'application/xhtml+xml', 'APPLICATION/JSON']) {
    t.ok(compressibleType(type), type)
  }
  for (const type of ['image/png', 'image/jpeg', 'image/webp', 'image/avif', 'image/gif', 'image/svg+xml', 'image/bmp', 'image/x-icon',
    'application/octet-stream', 'application/zip', 'application/gzip', 'application/pdf', 'video/mp4', 'audio/mpeg', 'font/woff2',
    'text/event-stream', 'application/jsonp', 'multipart/form-data', '']) {
    t.notOk(compressibleType(type), type)
  }
})

t.test('compress and compressStream: what they give decompresses to the body', async t => {
  const body = JSON.stringify({ items: Array.from({ length: 50 }, (_, i) => ({ slug: `entry-${i}`, title: `Entry ${i}` })) })
  t.ok(body.length > MIN_COMPRESSED_BYTES)
  for (const encoding of ['br', 'gzip'] as const) {
    const bytes = compress(body, encoding)
    t.ok(bytes.length < body.length / 2, `${encoding}: smaller`)
    t.equal(decode(bytes, encoding), body)
    t.equal(decode(compress(Buffer.from(body), encoding), encoding), body, `${encoding}: from a Buffer too`)
    const streamed = await buffer(Readable.from([body.slice(0, 100), body.slice(100)]).pipe(compressStream(encoding)))
    t.equal(decode(streamed, encoding), body, `${encoding}: streamed`)
  }
})

t.test('CompressedCopies: one copy per body and encoding, made once', async t => {
  const copies = new CompressedCopies()
  const body = Buffer.from('x'.repeat(4000))
  const other = Buffer.from('y'.repeat(4000))
  t.equal(copies.kept(body, 'br'), undefined, 'nothing kept before it is asked for')
  const br = copies.get(body, 'br')
  t.equal(decode(br, 'br'), body.toString())
  t.equal(copies.get(body, 'br'), br, 'the same bytes the second time: not compressed again')
  t.equal(copies.kept(body, 'br'), br)
  t.equal(copies.kept(body, 'gzip'), undefined, 'per encoding')
  const gzip = copies.get(body, 'gzip')
  t.equal(decode(gzip, 'gzip'), body.toString())
  t.equal(decode(copies.get(other, 'br'), 'br'), other.toString(), 'per body')
  t.equal(copies.get(body, 'br'), br)
})
