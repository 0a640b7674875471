import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import t, { type Test } from 'tap'
import sharp from 'sharp'
import { AssetLibrary } from '../../../lib/assets/library.js'
import { AssetRoots } from '../../../lib/assets/paths.js'
import { createAssetRepository } from '../../../lib/assets/repository.js'
import {
  formatOfSource, negotiateFormat, normalizeTransform, TransformService, type TransformServiceOptions
} from '../../../lib/assets/transforms.js'
import { tempDir } from '../../helper.js'
import { png } from './fixtures.js'

const silent = { info: () => {}, warn: () => {}, error: () => {} }

async function service (t: Test, options: Partial<TransformServiceOptions> = {}): Promise<{ transforms: TransformService, lib: AssetLibrary }> {
  const dataDir = tempDir(t)
  const lib = new AssetLibrary({
    repository: createAssetRepository('sqlite', { dataDir }),
    roots: new AssetRoots(path.join(dataDir, 'assets'), []),
    publicUrl: 'http://localhost',
    environments: [],
    uploadLimit: 10_000_000,
    emit: () => {},
    log: silent
  })
  await lib.open()
  const transforms = new TransformService({ library: lib, cacheDir: path.join(dataDir, 'cache', 'transforms'), concurrency: 1, log: silent, ...options })
  await transforms.open()
  t.teardown(async () => { await transforms.close(); await lib.close() })
  return { transforms, lib }
}

async function bytes (answer: { body: Buffer | NodeJS.ReadableStream }): Promise<Buffer> {
  if (Buffer.isBuffer(answer.body)) return answer.body
  const chunks: Buffer[] = []
  for await (const chunk of answer.body) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

async function add (lib: AssetLibrary, name: string, data: Buffer): Promise<void> {
  await lib.upload('default', (async function * () { yield { type: 'file' as const, fieldname: 'file', filename: name, file: Readable.from([data]) } })())
}

t.test('normalizeTransform makes defaults explicit', async t => {
  t.same(normalizeTransform({ w: 400 }, 'image/png', undefined), { w: 400, h: null, fit: 'cover', format: 'png', q: null })
  t.same(normalizeTransform({ w: 400, fit: 'contain' }, 'image/jpeg', undefined), { w: 400, h: null, fit: 'cover', format: 'jpeg', q: null }, 'fit needs both sides')
  t.same(normalizeTransform({ w: 4, h: 3, fit: 'contain', q: 70, format: 'webp' }, 'image/png', undefined), { w: 4, h: 3, fit: 'contain', format: 'webp', q: 70 })
  t.same(normalizeTransform({ q: 70, format: 'png' }, 'image/jpeg', undefined).q, null, 'PNG has no quality')
  t.equal(normalizeTransform({ format: 'auto' }, 'image/jpeg', 'image/avif').format, 'avif')
  t.equal(normalizeTransform({ format: 'auto' }, 'image/gif', 'text/html').format, 'png', 'a source sharp cannot write becomes PNG')
  for (const bad of [{ w: 0 }, { w: 4001 }, { h: 1.5 }, { q: 0 }, { q: 101 }, { fit: 'crop' }, { format: 'gif' }] as const) {
    t.throws(() => normalizeTransform(bad as never, 'image/png', undefined), { code: 'BAD_REQUEST' }, JSON.stringify(bad))
  }
})

t.test('negotiateFormat and formatOfSource', async t => {
  t.equal(negotiateFormat(undefined), null)
  t.equal(negotiateFormat('image/avif,image/webp,*/*;q=0.8'), 'avif')
  t.equal(negotiateFormat('image/webp'), 'webp')
  t.equal(negotiateFormat('IMAGE/WEBP;q=0.5'), 'webp')
  t.equal(negotiateFormat('image/avif;q=0,image/webp;q=0'), null)
  t.equal(negotiateFormat('image/*,*/*'), null, 'wildcards do not promise AVIF or WebP')
  t.equal(formatOfSource('image/jpeg'), 'jpeg')
  t.equal(formatOfSource('image/webp'), 'webp')
  t.equal(formatOfSource('image/avif'), 'avif')
  t.equal(formatOfSource('image/tiff'), 'png')
})

t.test('a source above the pixel limit is refused before decoding', async t => {
  const { transforms, lib } = await service(t, { pixelLimit: 1000 })
  await add(lib, 'big.png', await png(40, 40))
  await add(lib, 'ok.png', await png(20, 20))
  await t.rejects(transforms.prepare('default', 'big.png', { w: 10 }, undefined), { code: 'UNSUPPORTED_MEDIA_TYPE', message: /pixels/ })
  const variant = await transforms.prepare('default', 'ok.png', { w: 10 }, undefined)
  await bytes(await transforms.read(variant))
  t.equal(transforms.stats.computed, 1)
})

t.test('an image that cannot be decoded is a 415', async t => {
  const { transforms, lib } = await service(t)
  const good = await png(50, 50)
  // A real PNG header (so it is detected as one, with a size) but the pixel data cut off.
  await add(lib, 'broken.png', good.subarray(0, 60))
  const variant = await transforms.prepare('default', 'broken.png', { w: 10 }, undefined)
  await t.rejects(transforms.read(variant), { code: 'UNSUPPORTED_MEDIA_TYPE', message: /decoded/ })
})

t.test('beyond the queue limit a new computation is a 503', async t => {
  const { transforms, lib } = await service(t, { concurrency: 1, maxQueue: 0 })
  await add(lib, 'a.png', await png(400, 400))
  const first = await transforms.prepare('default', 'a.png', { w: 300, format: 'avif' }, undefined)
  const second = await transforms.prepare('default', 'a.png', { w: 200, format: 'avif' }, undefined)
  const running = transforms.read(first)
  await t.rejects(transforms.read(second), { code: 'UNAVAILABLE', statusCode: 503 })
  await bytes(await running)
  await bytes(await transforms.read(second))
  t.equal(transforms.stats.computed, 2, 'it works once the slot is free')
})

t.test('variants are written atomically: the cache holds whole files only', async t => {
  const { transforms, lib } = await service(t)
  await add(lib, 'a.png', await png(300, 200))
  const variant = await transforms.prepare('default', 'a.png', { w: 150, format: 'webp' }, undefined)
  const answer = await transforms.read(variant)
  const body = await bytes(answer)
  t.equal(body.length, answer.size)
  t.same((await sharp(body).metadata()).width, 150)
  t.match(path.basename(variant.file), /^w150-h0-cover-qd\.webp$/)
  t.same(readFileSync(variant.file), body, 'the cache file holds exactly the answer')
  writeFileSync(path.join(path.dirname(variant.file), 'unrelated'), 'x')
  t.equal(await transforms.invalidateAll(), 2, 'every file in the cache is counted')
})

t.test('small variants are served from memory, large ones streamed from disk', async t => {
  const { transforms, lib } = await service(t)
  await add(lib, 'small.png', await png(300, 200))
  const noise = await sharp({ create: { width: 900, height: 900, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).png().toBuffer()
  await add(lib, 'noise.png', noise)

  const small = await transforms.prepare('default', 'small.png', { w: 100, format: 'png' }, undefined)
  const first = await transforms.read(small)
  t.ok(Buffer.isBuffer(first.body), 'a small variant is read whole')
  rmSync(small.file)
  const again = await transforms.read(small)
  t.same(again.body, first.body, 'the second answer comes from memory, not the (now gone) file')
  t.equal(transforms.stats.computed, 1)
  t.equal(await transforms.invalidateAsset('default', 'small.png'), 0, 'the file was gone already')
  const fresh = await transforms.read(small)
  t.equal(transforms.stats.computed, 2, 'invalidation also forgets the memory copy')
  t.same(fresh.body, first.body)

  const large = await transforms.prepare('default', 'noise.png', { w: 900, format: 'png' }, undefined)
  const big = await transforms.read(large)
  t.notOk(Buffer.isBuffer(big.body), 'a large variant is streamed')
  t.ok(big.size > 512 * 1024)
  const streamed = await bytes(big)
  t.equal(streamed.length, big.size)
  t.same(streamed, readFileSync(large.file))
})
