// The admin plugin alone on a bare instance, with a stand-in build in a temp dir.
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib'
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import compressionPlugin from '../../plugins/compression.js'
import configPlugin from '../../plugins/config.js'
import adminPlugin, { defaultAdminDist, projectRoot } from '../../plugins/admin.js'
import { serverOptions } from '../../lib/server-options.js'
import { CmsError } from '../../lib/errors.js'
import { assertError, tempDir, testConfig } from '../helper.js'

const INDEX = '<!doctype html><title>Lectern admin</title><script type="module" src="/admin/assets/index-abc123.js"></script>'

function fakeDist (t: Test): string {
  const dist = path.join(tempDir(t, 'lectern-admin-'), 'dist')
  mkdirSync(path.join(dist, 'assets'), { recursive: true })
  writeFileSync(path.join(dist, 'index.html'), INDEX)
  writeFileSync(path.join(dist, 'assets', 'index-abc123.js'), 'console.log("admin")')
  // Beside the build, never to be served.
  writeFileSync(path.join(dist, '..', 'secret.txt'), 'TOP-SECRET')
  return dist
}

async function bare (t: Test, adminDist: string, env: Record<string, string> = {}): Promise<FastifyInstance> {
  const config = testConfig(path.join(tempDir(t), 'data'), env)
  const fastify = Fastify(serverOptions(config))
  await fastify.register(configPlugin, { config })
  await fastify.register(compressionPlugin)
  await fastify.register(adminPlugin, { adminDist })
  // The app's handler renders CmsErrors as the contract's envelope; the same here.
  fastify.setErrorHandler((err, _request, reply) => {
    if (err instanceof CmsError) return reply.code(err.statusCode).send(err.toBody())
    return reply.send(err)
  })
  fastify.get('/api/other', async () => ({ ok: true }))
  await fastify.ready()
  t.teardown(async () => { await fastify.close() })
  return fastify
}

t.test('/admin/ answers the page, with no-cache and a content security policy', async t => {
  const app = await bare(t, fakeDist(t))
  const res = await app.inject('/admin/')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/html/)
  t.equal(res.body, INDEX)
  t.equal(res.headers['cache-control'], 'no-cache')
  t.match(res.headers['content-security-policy'], /frame-ancestors 'none'/)
  t.match(res.headers['content-security-policy'], /script-src 'self'/)
})

t.test('/admin redirects to /admin/, keeping the query', async t => {
  const app = await bare(t, fakeDist(t))
  const res = await app.inject('/admin?locale=fr')
  t.equal(res.statusCode, 301)
  t.equal(res.headers.location, '/admin/?locale=fr')
})

t.test('deep links without an extension answer the page', async t => {
  const app = await bare(t, fakeDist(t))
  for (const url of ['/admin/content/post', '/admin/content/post/entry/hello-world?locale=fr', '/admin/schemas/new']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 200, url)
    t.equal(res.body, INDEX, url)
    t.match(res.headers['content-type'], /^text\/html/, url)
  }
  const head = await app.inject({ method: 'HEAD', url: '/admin/assets' })
  t.equal(head.statusCode, 200, 'HEAD of an app route')
})

t.test('built files are served with long-lived caching; missing files are 404s', async t => {
  const app = await bare(t, fakeDist(t))
  const js = await app.inject('/admin/assets/index-abc123.js')
  t.equal(js.statusCode, 200)
  t.match(js.headers['content-type'], /javascript/)
  t.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable')
  t.equal(js.headers['x-content-type-options'], 'nosniff')

  const missing = await app.inject('/admin/assets/nope-123.js')
  assertError(t, missing, 404, 'NOT_FOUND')
  const post = await app.inject({ method: 'POST', url: '/admin/content' })
  t.equal(post.statusCode, 404, 'only GET and HEAD reach the page')
})

/** A build whose script (2 KB or more) has its .br and .gz beside it, as `npm run build:admin` writes them. */
function compressedDist (t: Test): { dist: string, script: string } {
  const dist = fakeDist(t)
  const script = `console.log(${JSON.stringify('admin '.repeat(400))})`
  const file = path.join(dist, 'assets', 'app-def456.js')
  writeFileSync(file, script)
  writeFileSync(`${file}.br`, brotliCompressSync(script))
  writeFileSync(`${file}.gz`, gzipSync(script))
  writeFileSync(path.join(dist, 'index.html.br'), brotliCompressSync(INDEX))
  return { dist, script }
}

t.test('built files are sent pre-compressed, as the browser accepts, with the headers of the file', async t => {
  const { dist, script } = compressedDist(t)
  const app = await bare(t, dist)
  const plain = await app.inject('/admin/assets/app-def456.js')
  for (const [accept, encoding] of [['gzip, deflate, br', 'br'], ['gzip', 'gzip'], ['identity', undefined]] as const) {
    const res = await app.inject({ url: '/admin/assets/app-def456.js', headers: { 'accept-encoding': accept } })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-encoding'], encoding, `${accept}: ${String(encoding)}`)
    t.match(res.headers.vary, /accept-encoding/i)
    t.match(res.headers['content-type'], /javascript/, 'the type of the file, not of its .br')
    t.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable')
    const body = encoding === 'br' ? brotliDecompressSync(res.rawPayload) : encoding === 'gzip' ? gunzipSync(res.rawPayload) : res.rawPayload
    t.equal(body.toString(), script)
    t.equal(res.headers['content-length'], String(res.rawPayload.length), 'the file as built, not compressed again')
  }
  t.equal(plain.body, script)

  // The page's own headers when its .br is sent.
  const page = await app.inject({ url: '/admin/index.html', headers: { 'accept-encoding': 'br' } })
  t.equal(page.headers['content-encoding'], 'br')
  t.equal(brotliDecompressSync(page.rawPayload).toString(), INDEX)
  t.match(page.headers['content-security-policy'], /frame-ancestors 'none'/)
  t.equal(page.headers['cache-control'], 'no-cache')

  // A small file has no compressed twin and goes as it is.
  const small = await app.inject({ url: '/admin/assets/index-abc123.js', headers: { 'accept-encoding': 'br' } })
  t.equal(small.headers['content-encoding'], undefined)
  t.equal(small.body, 'console.log("admin")')

  const off = await bare(t, dist, { CMS_COMPRESSION: 'false' })
  const res = await off.inject({ url: '/admin/assets/app-def456.js', headers: { 'accept-encoding': 'br' } })
  t.equal(res.headers['content-encoding'], undefined, 'CMS_COMPRESSION=false: the file as it is')
  t.equal(res.body, script)
})

t.test('no path leaves the build directory', async t => {
  const app = await bare(t, fakeDist(t))
  for (const url of ['/admin/%2e%2e/secret.txt', '/admin/..%2fsecret.txt', '/admin/assets/..%2f..%2fsecret.txt', '/admin/assets/%2e%2e/%2e%2e/secret.txt', '/admin/..%5csecret.txt']) {
    const res = await app.inject(url)
    t.not(res.statusCode, 200, url)
    t.notMatch(res.body, /TOP-SECRET/, url)
  }
})

t.test('without a build, /admin answers 503 in the error envelope and says how to build', async t => {
  const app = await bare(t, path.join(tempDir(t), 'missing-dist'))
  for (const url of ['/admin', '/admin/', '/admin/content/post']) {
    const res = await app.inject(url)
    assertError(t, res, 503, 'UNAVAILABLE')
    t.match(res.json().message, /npm run build/, url)
  }
  const other = await app.inject('/api/other')
  t.equal(other.statusCode, 200, 'the rest of the server works')
})

t.test('admin/dist is found from the project root, from source and from dist/', async t => {
  const root = projectRoot(import.meta.dirname)
  t.ok(root !== null, 'a package.json above the tests')
  t.equal(defaultAdminDist(path.join(root ?? '', 'plugins')), path.join(root ?? '', 'admin', 'dist'))
  t.equal(defaultAdminDist(path.join(root ?? '', 'dist', 'plugins')), path.join(root ?? '', 'admin', 'dist'))
  t.equal(projectRoot(path.parse(process.cwd()).root), null, 'none above the file-system root')
})
