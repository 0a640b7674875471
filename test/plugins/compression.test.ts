// The compression plugin alone, on a bare instance: which replies its onSend hook compresses.
import { Readable } from 'node:stream'
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import configPlugin from '../../plugins/config.js'
import compressionPlugin from '../../plugins/compression.js'
import { tempDir, testConfig } from '../helper.js'

const BIG = JSON.stringify({ items: Array.from({ length: 60 }, (_, i) => ({ slug: `entry-${i}`, title: `Entry ${i}` })) })
const SMALL = JSON.stringify({ items: [{ slug: 'entry-1' }] })

async function bare (t: Test, env: Record<string, string> = {}): Promise<FastifyInstance> {
  const config = testConfig(tempDir(t), env)
  const fastify = Fastify()
  await fastify.register(configPlugin, { config })
  await fastify.register(compressionPlugin)
  fastify.get('/big', async () => JSON.parse(BIG) as unknown)
  fastify.get('/small', async () => JSON.parse(SMALL) as unknown)
  fastify.get('/text', async (_request, reply) => reply.type('text/plain; charset=utf-8').send(BIG))
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(4000)])
  fastify.get('/png', async (_request, reply) => reply.type('image/png').send(png))
  fastify.get('/svg', async (_request, reply) => reply.type('image/svg+xml').send(`<svg xmlns="http://www.w3.org/2000/svg">${'<g/>'.repeat(500)}</svg>`))
  fastify.get('/binary', async (_request, reply) => reply.type('application/octet-stream').send(Buffer.alloc(4000)))
  fastify.get('/encoded', async (_request, reply) => reply.type('application/json').header('content-encoding', 'gzip').send(gzipSync(BIG)))
  fastify.get('/stream', async (_request, reply) => reply.type('text/css').header('content-length', BIG.length).send(Readable.from([BIG.slice(0, 500), BIG.slice(500)])))
  fastify.get('/small-stream', async (_request, reply) => reply.type('text/css').header('content-length', SMALL.length).send(Readable.from([SMALL])))
  fastify.get('/unsized-stream', async (_request, reply) => reply.type('text/css').send(Readable.from([BIG])))
  fastify.get('/partial', async (_request, reply) => reply.code(206).type('text/plain').header('content-range', `bytes 0-${BIG.length - 1}/${BIG.length * 2}`).send(BIG))
  fastify.get('/origin', async (_request, reply) => reply.header('vary', 'Origin').send(JSON.parse(BIG) as unknown))
  fastify.get('/any', async (_request, reply) => reply.header('vary', '*').send(JSON.parse(BIG) as unknown))
  await fastify.ready()
  t.teardown(async () => { await fastify.close() })
  return fastify
}

function decoded (res: LightMyRequestResponse): string {
  const encoding = res.headers['content-encoding']
  if (encoding === 'br') return brotliDecompressSync(res.rawPayload).toString()
  if (encoding === 'gzip') return gunzipSync(res.rawPayload).toString()
  return res.body
}

t.test('a JSON reply of 1 KB or more: br, else gzip, as the request accepts; Vary either way', async t => {
  const f = await bare(t)
  for (const [accept, encoding] of [['gzip, deflate, br', 'br'], ['gzip', 'gzip'], ['br;q=0, gzip', 'gzip'], ['identity', undefined], [undefined, undefined]] as const) {
    const res = await f.inject({ url: '/big', headers: accept === undefined ? {} : { 'accept-encoding': accept } })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-encoding'], encoding, `${String(accept)}: ${String(encoding)}`)
    t.equal(res.headers.vary, 'accept-encoding', 'the answer depends on Accept-Encoding')
    t.equal(res.headers['content-length'], String(res.rawPayload.length), 'the length of the bytes sent')
    t.equal(decoded(res), BIG)
  }
})

t.test('under 1 KB, images, binary, already encoded, partial: sent as they are', async t => {
  const f = await bare(t)
  const accept = { 'accept-encoding': 'gzip, deflate, br' }
  for (const url of ['/small', '/png', '/svg', '/binary', '/small-stream', '/partial']) {
    const res = await f.inject({ url, headers: accept })
    t.equal(res.headers['content-encoding'], undefined, `${url}: not compressed`)
    t.equal(res.headers.vary, undefined, `${url}: no Vary`)
  }
  const encoded = await f.inject({ url: '/encoded', headers: accept })
  t.equal(encoded.headers['content-encoding'], 'gzip', 'a Content-Encoding set by the route stays')
  t.equal(decoded(encoded), BIG, 'and its bytes are not compressed twice')
})

t.test('a stream of 1 KB or more, or of unknown size, is compressed as it is sent', async t => {
  const f = await bare(t)
  for (const url of ['/stream', '/unsized-stream']) {
    const res = await f.inject({ url, headers: { 'accept-encoding': 'br' } })
    t.equal(res.headers['content-encoding'], 'br', url)
    t.equal(res.headers['content-length'], undefined, `${url}: the compressed length is not known ahead`)
    t.equal(res.headers.vary, 'accept-encoding')
    t.equal(decoded(res), BIG)
  }
  const text = await f.inject({ url: '/text', headers: { 'accept-encoding': 'gzip' } })
  t.equal(text.headers['content-encoding'], 'gzip', 'text too')
  t.equal(decoded(text), BIG)
})

t.test('Accept-Encoding joins the Vary a route set', async t => {
  const f = await bare(t)
  t.equal((await f.inject({ url: '/origin', headers: { 'accept-encoding': 'br' } })).headers.vary, 'Origin, accept-encoding')
  t.equal((await f.inject({ url: '/any', headers: { 'accept-encoding': 'br' } })).headers.vary, '*', 'Vary: * already covers it')
})

t.test('HEAD: the headers a GET answers, no body', async t => {
  const f = await bare(t)
  const get = await f.inject({ url: '/big', headers: { 'accept-encoding': 'br' } })
  const head = await f.inject({ method: 'HEAD', url: '/big', headers: { 'accept-encoding': 'br' } })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  t.equal(head.headers['content-encoding'], 'br')
  t.equal(head.headers['content-length'], get.headers['content-length'])
  const stream = await f.inject({ method: 'HEAD', url: '/stream', headers: { 'accept-encoding': 'br' } })
  t.equal(stream.body, '')
  t.equal(stream.headers['content-encoding'], 'br', 'a file: the headers of its GET')
  t.equal(stream.headers['content-length'], undefined)
})

t.test('CMS_COMPRESSION=false: nothing is compressed, and nothing varies', async t => {
  const f = await bare(t, { CMS_COMPRESSION: 'false' })
  for (const url of ['/big', '/stream', '/text']) {
    const res = await f.inject({ url, headers: { 'accept-encoding': 'gzip, deflate, br' } })
    t.equal(res.headers['content-encoding'], undefined, url)
    t.equal(res.headers.vary, undefined, url)
    t.equal(res.body, BIG)
  }
})
