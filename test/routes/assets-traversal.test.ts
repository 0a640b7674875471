// Path safety on every asset and transform route (contract §7). The requests go over a real
// socket with the path exactly as written: inject and fetch would normalize `..` away first.
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { assertShape, build, tempDir } from '../helper.js'
import { ErrorReply } from '../../types/errors.js'
import { multipart, png, rawRequest, upload, type RawResponse } from '../lib/assets/fixtures.js'

/** Unsafe forms of a path, as they go on the wire after the route's prefix. */
const UNSAFE = [
  '../secret.txt',
  '..',
  'a/../../secret.txt',
  'a/..',
  '%2e%2e/secret.txt',
  '%2E%2E%2Fsecret.txt',
  '..%2fsecret.txt',
  '.%2e/secret.txt',
  '%252e%252e%252fsecret.txt',
  'a%5c..%5c..%5csecret.txt',
  'a\\b.png',
  'a%00.png',
  'ok.png%00.txt',
  '/etc/passwd',
  '%2fetc%2fpasswd',
  'C:%5cWindows%5cwin.ini',
  'c:/secret.txt'
]

function assertBadRequest (t: Test, res: RawResponse, what: string): void {
  t.equal(res.status, 400, `${what}: 400`)
  const body = JSON.parse(res.body.toString('utf8')) as { code: string }
  assertShape(t, ErrorReply, body, `${what}: error envelope`)
  t.equal(body.code, 'BAD_REQUEST', `${what}: BAD_REQUEST`)
}

async function setup (t: Test): Promise<{ app: FastifyInstance, outside: string }> {
  const app = await build(t)
  const res = await upload(app, [{ name: 'ok.png', data: await png(20, 20) }], { fields: { folder: 'a' } })
  t.equal(res.statusCode, 201)
  // Files a traversal would reach: beside the assets dir and above the data dir.
  writeFileSync(path.join(app.config.dataDir, 'secret.txt'), 'secret')
  writeFileSync(path.join(path.dirname(app.config.dataDir), 'secret.txt'), 'secret')
  const outside = tempDir(t, 'lectern-outside-')
  return { app, outside }
}

t.test('every route answers 400 to every unsafe path', async t => {
  const { app } = await setup(t)
  for (const unsafe of UNSAFE) {
    assertBadRequest(t, await rawRequest(app, 'GET', `/api/assets/${unsafe}`), `GET /api/assets/${unsafe}`)
    t.equal((await rawRequest(app, 'HEAD', `/api/assets/${unsafe}`)).status, 400, `HEAD /api/assets/${unsafe}: 400`)
    assertBadRequest(t, await rawRequest(app, 'DELETE', `/api/assets/${unsafe}`), `DELETE /api/assets/${unsafe}`)
    assertBadRequest(t, await rawRequest(app, 'GET', `/api/transform/${unsafe}?w=10`), `GET /api/transform/${unsafe}`)
  }
  // Still there, and still served.
  t.equal((await rawRequest(app, 'GET', '/api/assets/a/ok.png')).status, 200)
  t.equal((await rawRequest(app, 'GET', '/api/transform/a/ok.png?w=10')).status, 200)
  t.ok(existsSync(path.join(app.config.dataDir, 'secret.txt')), 'nothing was deleted outside')
})

t.test('invalidate answers 400 to unsafe paths', async t => {
  const { app } = await setup(t)
  for (const unsafe of UNSAFE) {
    // JSON escapes the backslash and NUL; the server sees them as they are.
    const value = `/api/assets/${unsafe.replace(/%5c/gi, '\\').replace(/%00/g, '\0')}`
    const res = await rawRequest(app, 'POST', '/api/transform/cache/invalidate', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: value })
    })
    assertBadRequest(t, res, `invalidate ${JSON.stringify(value)}`)
  }
})

t.test('uploads: an unsafe folder is 400 and nothing is written', async t => {
  const { app, outside } = await setup(t)
  const image = await png(8, 8)
  const before = readdirSync(path.dirname(app.config.dataDir), { recursive: true }).sort()
  for (const folder of ['../x', '..', 'a/../../x', '..\\x', 'a\\b', '/abs', '/', 'a\0b', '%2e%2e/x', '%252e%252e/x', 'C:/x', 'c:\\x', `${outside}/x`, 'a//b', './a']) {
    const body = await multipart([{ name: 'x.png', data: image }], { folder })
    const res = await rawRequest(app, 'POST', '/api/assets', { headers: body.headers, body: body.payload })
    assertBadRequest(t, res, `folder ${JSON.stringify(folder)}`)
  }
  t.same(readdirSync(path.dirname(app.config.dataDir), { recursive: true }).sort(), before, 'no file or folder appeared anywhere')
  t.same(readdirSync(outside), [])
})

t.test('uploads: a file name carrying a path keeps only its base name', async t => {
  const { app } = await setup(t)
  const res = await upload(app, [{ name: '../../evil.png', data: await png(8, 8) }, { name: '..\\..\\worse.png', data: await png(8, 8) }])
  t.equal(res.statusCode, 201)
  t.same(res.json().items.map((i: { path: string }) => i.path), ['/api/assets/evil.png', '/api/assets/worse.png'])
  t.ok(existsSync(path.join(app.config.assetsDir, 'evil.png')))
  t.notOk(existsSync(path.join(app.config.dataDir, '..', 'evil.png')))
})

t.test('the list filter rejects an unsafe folder', async t => {
  const { app } = await setup(t)
  for (const folder of ['..', '../x', '%2e%2e', '%252e%252e', 'a%5cb', '%2fabs', 'a%00']) {
    assertBadRequest(t, await rawRequest(app, 'GET', `/api/assets?folder=${folder}`), `?folder=${folder}`)
  }
})

t.test('symbolic links never lead outside the assets directory', async t => {
  const { app, outside } = await setup(t)
  const secret = path.join(outside, 'secret.png')
  writeFileSync(secret, await png(10, 10))
  mkdirSync(path.join(outside, 'dir'))
  // A linked file and a linked folder, both pointing outside, with metadata that claims them.
  symlinkSync(secret, path.join(app.config.assetsDir, 'link.png'))
  symlinkSync(path.join(outside, 'dir'), path.join(app.config.assetsDir, 'evil'))
  symlinkSync(outside, path.join(app.config.assetsDir, 'out'))
  const meta = { environment: 'default', folder: '', size: 10, mime: 'image/png', width: 10, height: 10, createdAt: new Date().toISOString() }
  await app.assets.repository.insert({ ...meta, path: 'link.png', name: 'link.png' })
  await app.assets.repository.insert({ ...meta, path: 'out/secret.png', folder: 'out', name: 'secret.png' })

  for (const p of ['link.png', 'out/secret.png']) {
    t.equal((await rawRequest(app, 'GET', `/api/assets/${p}`)).status, 404, `GET ${p}`)
    t.equal((await rawRequest(app, 'GET', `/api/transform/${p}?w=5`)).status, 404, `transform ${p}`)
  }

  const body = await multipart([{ name: 'x.png', data: await png(8, 8) }], { folder: 'evil' })
  assertBadRequest(t, await rawRequest(app, 'POST', '/api/assets', { headers: body.headers, body: body.payload }), 'upload into a linked folder')
  const deeper = await multipart([{ name: 'x.png', data: await png(8, 8) }], { folder: 'evil/sub' })
  assertBadRequest(t, await rawRequest(app, 'POST', '/api/assets', { headers: deeper.headers, body: deeper.payload }), 'upload below a linked folder')
  t.same(readdirSync(path.join(outside, 'dir')), [], 'nothing was written through the link')

  // Deleting drops the records but never the targets.
  t.equal((await rawRequest(app, 'DELETE', '/api/assets/link.png')).status, 204)
  t.equal((await rawRequest(app, 'DELETE', '/api/assets/out/secret.png')).status, 204)
  t.ok(existsSync(secret), 'the target outside is untouched')
})
