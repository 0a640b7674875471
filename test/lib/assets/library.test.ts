import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import t, { type Test } from 'tap'
import { AssetLibrary, servingHeaders, uploadName, type UploadPart } from '../../../lib/assets/library.js'
import { AssetRoots } from '../../../lib/assets/paths.js'
import { createAssetRepository, type AssetRepository } from '../../../lib/assets/repository.js'
import type { AssetEvent } from '../../../types/events.js'
import { STORES, tempDir } from '../../helper.js'
import { assetRepository, jpeg, png, SVG } from './fixtures.js'

interface Logged { level: string, obj: object, msg?: string }

function library (t: Test, kind: 'sqlite' | 'file', dataDir: string, environments: string[] = [], uploadLimit = 1_000_000, locateTtlMs?: number, repository?: AssetRepository): { lib: AssetLibrary, logged: Logged[], events: AssetEvent[] } {
  const logged: Logged[] = []
  const events: AssetEvent[] = []
  const log = {
    info: (obj: object, msg?: string) => { logged.push({ level: 'info', obj, msg }) },
    warn: (obj: object, msg?: string) => { logged.push({ level: 'warn', obj, msg }) },
    error: (obj: object, msg?: string) => { logged.push({ level: 'error', obj, msg }) }
  }
  const lib = new AssetLibrary({
    repository: repository ?? createAssetRepository(kind, { dataDir }),
    roots: new AssetRoots(path.join(dataDir, 'assets'), environments),
    publicUrl: 'https://cms.example.com',
    environments,
    uploadLimit,
    emit: event => { events.push(event) },
    log,
    locateTtlMs
  })
  t.teardown(async () => { await lib.close() })
  return { lib, logged, events }
}

async function * parts (...list: UploadPart[]): AsyncGenerator<UploadPart> {
  for (const part of list) yield part
}

function file (filename: string, data: Buffer | Iterable<Buffer>): UploadPart {
  return { type: 'file', fieldname: 'file', filename, file: Readable.from(Buffer.isBuffer(data) ? [data] : data) }
}

for (const kind of STORES) {
  t.test(`${kind}: missing metadata is rebuilt from the files on disk and logged`, async t => {
    const dataDir = tempDir(t)
    const assets = path.join(dataDir, 'assets')
    mkdirSync(path.join(assets, 'photos', 'deep'), { recursive: true })
    writeFileSync(path.join(assets, 'photos', 'cat.png'), await png(30, 20))
    writeFileSync(path.join(assets, 'photos', 'deep', 'IMG_1.JPG'), await jpeg(12, 6))
    writeFileSync(path.join(assets, 'readme.txt'), 'hello')
    writeFileSync(path.join(assets, 'logo.svg'), SVG)
    writeFileSync(path.join(assets, '.upload-stale.tmp'), 'half an upload')
    writeFileSync(path.join(assets, 'bad name.txt'), 'cannot be addressed')
    symlinkSync('/etc/hostname', path.join(assets, 'link.txt'))

    const { lib, logged } = library(t, 'sqlite', dataDir, [], undefined, undefined, await assetRepository(t, kind, dataDir))
    const result = await lib.open()
    t.same(result, { rebuilt: 'missing', count: 4 })
    t.match(logged.find(l => l.level === 'info'), { obj: { store: kind, reason: 'missing', assets: 4 }, msg: /rebuilt/ })
    t.match(logged.find(l => l.level === 'warn'), { obj: { path: 'bad name.txt' } })
    const list = await lib.list('default', { perPage: 10 })
    const byPath = Object.fromEntries(list.items.map(i => [i.path, [i.mime, i.width, i.height, i.folder]]))
    t.same(byPath, {
      '/api/assets/photos/cat.png': ['image/png', 30, 20, 'photos'],
      '/api/assets/photos/deep/IMG_1.JPG': ['image/jpeg', 12, 6, 'photos/deep'],
      '/api/assets/readme.txt': ['text/plain', null, null, ''],
      '/api/assets/logo.svg': ['image/svg+xml', 120, 80, '']
    })
    t.equal((await lib.list('default', { q: 'img' })).total, 1, 'a rebuilt upper-case name is found case-insensitively')
  })

  t.test(`${kind}: with environments each directory is scanned on its own`, async t => {
    const dataDir = tempDir(t)
    mkdirSync(path.join(dataDir, 'assets', 'live'), { recursive: true })
    mkdirSync(path.join(dataDir, 'assets', 'draft', 'x'), { recursive: true })
    writeFileSync(path.join(dataDir, 'assets', 'live', 'a.txt'), 'a')
    writeFileSync(path.join(dataDir, 'assets', 'draft', 'x', 'b.txt'), 'b')
    const { lib } = library(t, 'sqlite', dataDir, ['live', 'draft'], undefined, undefined, await assetRepository(t, kind, dataDir))
    await lib.open()
    t.same((await lib.list('live', {})).items.map(i => i.url), ['https://cms.example.com/api/assets/a.txt'])
    t.same((await lib.list('draft', {})).items.map(i => i.url), ['https://cms.example.com/api/assets/x/b.txt?_environment=draft'])
  })
}

t.test('concurrent uploads of one name get distinct names', async t => {
  const { lib, events } = library(t, 'sqlite', tempDir(t))
  await lib.open()
  const image = await png(8, 8)
  const results = await Promise.all(Array.from({ length: 10 }, async () =>
    await lib.upload('default', parts({ type: 'field', fieldname: 'folder', value: 'same' }, file('Same.PNG', image)))))
  const names = results.flat().map(r => r.name).sort()
  t.same(names, ['same-1.png', 'same-2.png', 'same-3.png', 'same-4.png', 'same-5.png', 'same-6.png', 'same-7.png', 'same-8.png', 'same-9.png', 'same.png'])
  t.equal(events.length, 10)
  t.equal(readdirSync(path.join(lib.roots.dir('default'), 'same')).length, 10)
})

t.test('a file is streamed in chunks and a name already on disk counts as taken', async t => {
  const dataDir = tempDir(t)
  const { lib } = library(t, 'file', dataDir)
  await lib.open()
  mkdirSync(path.join(dataDir, 'assets'), { recursive: true })
  writeFileSync(path.join(dataDir, 'assets', 'big.bin'), 'a stray file without metadata')
  const chunk = Buffer.alloc(64 * 1024, 7)
  const [record] = await lib.upload('default', parts(file('big.bin', Array.from({ length: 16 }, () => chunk))))
  t.equal(record?.name, 'big-1.bin')
  t.equal(record?.size, 16 * chunk.length)
  t.equal(record?.mime, 'application/octet-stream')
})

t.test('the upload limit: 413 and the staged file removed', async t => {
  const dataDir = tempDir(t)
  const { lib } = library(t, 'sqlite', dataDir, [], 1000)
  await lib.open()
  // What busboy does at the limit: the stream ends early, marked truncated.
  const truncated = Object.assign(Readable.from([Buffer.alloc(1000)]), { truncated: true })
  await t.rejects(lib.upload('default', parts({ type: 'file', fieldname: 'file', filename: 'a.bin', file: truncated })), { code: 'PAYLOAD_TOO_LARGE', statusCode: 413 })
  // What @fastify/multipart throws for too many files.
  const failing = (async function * (): AsyncGenerator<UploadPart> {
    yield file('ok.txt', Buffer.from('fine'))
    throw Object.assign(new Error('reach files limit'), { statusCode: 413, code: 'FST_FILES_LIMIT' })
  })()
  await t.rejects(lib.upload('default', failing), { code: 'PAYLOAD_TOO_LARGE' })
  t.same(readdirSync(path.join(dataDir, 'assets')), [], 'nothing staged is left')
})

t.test('delete: a stray file without metadata, hooks, events', async t => {
  const dataDir = tempDir(t)
  const { lib, events, logged } = library(t, 'sqlite', dataDir)
  await lib.open()
  mkdirSync(path.join(dataDir, 'assets', 'f'), { recursive: true })
  writeFileSync(path.join(dataDir, 'assets', 'f', 'stray.svg'), SVG)
  const hooked: string[] = []
  lib.onRemove(async (environment, relative) => { hooked.push(`${environment}:${relative}`) })
  lib.onRemove(async () => { throw new Error('variant cache unavailable') })
  await lib.remove('default', 'f/stray.svg')
  t.notOk(existsSync(path.join(dataDir, 'assets', 'f', 'stray.svg')))
  t.same(events, [{ event: 'asset.deleted', path: '/api/assets/f/stray.svg', environment: 'default', size: SVG.length, mime: 'image/svg+xml' }])
  t.same(hooked, ['default:f/stray.svg'])
  t.match(logged.find(l => l.level === 'error'), { msg: /variants/ }, "a hook's failure is logged, the delete stands")
  await t.rejects(lib.remove('default', 'f/stray.svg'), { code: 'NOT_FOUND' })
  await t.rejects(lib.remove('default', '../x'), { code: 'BAD_REQUEST' })
})

t.test('uploadName', async t => {
  t.equal(uploadName('My Photo.JPG'), 'my-photo.jpg')
  t.equal(uploadName('résumé final.PDF'), 'resume-final.pdf')
  t.equal(uploadName('archive.tar.gz'), 'archive-tar.gz')
  t.equal(uploadName('README'), 'readme')
  for (const bad of ['', '  ', '..', 'a/b.png', 'a\\b.png', 'a\0.png', '!!!.png', `${'x'.repeat(200)}.${'y'.repeat(40)}`, undefined]) {
    t.throws(() => uploadName(bad), { code: 'BAD_REQUEST' }, JSON.stringify(bad))
  }
})

t.test('servingHeaders sandboxes active content only', async t => {
  t.same(servingHeaders('image/png'), { 'content-type': 'image/png', 'x-content-type-options': 'nosniff' })
  for (const mime of ['image/svg+xml', 'application/xml', 'text/html', 'application/xhtml+xml', 'application/rss+xml']) {
    t.match(servingHeaders(mime)['content-security-policy'], /sandbox/, mime)
  }
})

t.test('list parameters are checked', async t => {
  const { lib } = library(t, 'file', tempDir(t))
  await lib.open()
  for (const bad of [{ page: 0 }, { page: 1.5 }, { perPage: 0 }, { perPage: 1001 }, { folder: '../x' }, { page: '1e20' }, { page: 1e20 }, { perPage: '0x10' }]) {
    await t.rejects(lib.list('default', bad), { code: 'BAD_REQUEST' }, JSON.stringify(bad))
  }
  t.match(await lib.list('default', {}), { items: [], total: 0, page: 1, per_page: 20, pages: 0 })
})

t.test('locate remembers a file briefly; API changes are seen at once', async t => {
  const dataDir = tempDir(t)
  const { lib } = library(t, 'sqlite', dataDir)
  await lib.open()
  await lib.upload('default', parts(file('a.txt', Buffer.from('one'))))
  const first = await lib.locate('default', 'a.txt')
  t.equal(first.stat.size, 3)
  writeFileSync(path.join(dataDir, 'assets', 'a.txt'), 'changed behind the API')
  t.equal((await lib.locate('default', 'a.txt')).stat.size, 3, 'remembered for a moment')
  lib.forget('default', 'a.txt')
  t.equal((await lib.locate('default', 'a.txt')).stat.size, 22, 'seen once forgotten')
  await lib.remove('default', 'a.txt')
  await t.rejects(lib.locate('default', 'a.txt'), { code: 'NOT_FOUND' }, 'a delete is seen at once')
  await lib.upload('default', parts(file('a.txt', Buffer.from('again!'))))
  t.equal((await lib.locate('default', 'a.txt')).stat.size, 6, 'so is an upload')

  const { lib: uncached } = library(t, 'file', tempDir(t), [], 1_000_000, 0)
  await uncached.open()
  await uncached.upload('default', parts(file('b.txt', Buffer.from('one'))))
  t.equal((await uncached.locate('default', 'b.txt')).stat.size, 3)
  writeFileSync(path.join(uncached.roots.dir('default'), 'b.txt'), 'four')
  t.equal((await uncached.locate('default', 'b.txt')).stat.size, 4, 'locateTtlMs 0 checks every time')
})
