// The assets and transforms plugins on a bare instance (with the store, which keeps PostgreSQL's records).
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Readable, Writable } from 'node:stream'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { pino } from 'pino'
import t, { type Test } from 'tap'
import configPlugin from '../../plugins/config.js'
import dataPlugin from '../../plugins/data.js'
import eventsPlugin from '../../plugins/events.js'
import clusterPlugin from '../../plugins/cluster.js'
import storePlugin from '../../plugins/store.js'
import assetsPlugin from '../../plugins/assets.js'
import transformsPlugin from '../../plugins/transforms.js'
import { STORES, storeEnv, testConfig, tempDir, type Env } from '../helper.js'
import { png } from '../lib/assets/fixtures.js'

async function bare (t: Test, dataDir: string, env: Env = {}): Promise<{ app: FastifyInstance, lines: Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write (chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    }
  })
  const app = Fastify({ loggerInstance: pino({ level: 'info' }, sink) as FastifyBaseLogger })
  await app.register(configPlugin, { config: testConfig(dataDir, env) })
  await app.register(dataPlugin)
  await app.register(eventsPlugin)
  await app.register(clusterPlugin)
  await app.register(storePlugin)
  await app.register(assetsPlugin)
  await app.register(transformsPlugin)
  await app.ready()
  t.teardown(async () => { await app.close() })
  return { app, lines }
}

for (const store of STORES) {
  t.test(`${store}: decorates assets and transforms; rebuilds missing metadata and logs it`, async t => {
    const dataDir = path.join(tempDir(t), 'data')
    mkdirSync(path.join(dataDir, 'assets', 'old'), { recursive: true })
    writeFileSync(path.join(dataDir, 'assets', 'old', 'a.png'), await png(30, 10))
    const { app, lines } = await bare(t, dataDir, await storeEnv(t, store, dataDir))
    t.ok(app.hasDecorator('assets'))
    t.ok(app.hasDecorator('transforms'))
    t.equal(app.assets.repository.kind, store)
    const rebuilt = lines.find(l => l.msg === 'asset metadata was missing: rebuilt it from the files on disk')
    t.match(rebuilt, { level: 30, store, reason: 'missing', assets: 1 })
    const list = await app.assets.list('default', {})
    t.same(list.items.map(i => [i.path, i.width, i.height]), [['/api/assets/old/a.png', 30, 10]])
    const variant = await app.transforms.prepare('default', 'old/a.png', { w: 15, format: 'png' }, undefined)
    const { body } = await app.transforms.read(variant)
    t.ok(Buffer.isBuffer(body))
    t.match(variant.file, path.join(dataDir, 'cache', 'transforms', 'default'), 'variants live under <data>/cache/transforms')
  })
}

t.test('a second start loads the metadata without a rebuild; close releases it', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const first = await bare(t, dataDir)
  await first.app.close()
  await t.rejects(first.app.assets.repository.get('default', 'x'), /not open/, 'onClose closed the repository')
  const second = await bare(t, dataDir)
  t.notOk(second.lines.some(l => typeof l.msg === 'string' && l.msg.includes('rebuilt')), 'nothing to rebuild')
})

t.test('deleting through the library drops the variants (the transforms hook)', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const { app } = await bare(t, dataDir)
  await app.assets.upload('default', (async function * () {
    yield { type: 'file' as const, fieldname: 'file', filename: 'x.png', file: Readable.from([await png(20, 20)]) }
  })())
  const variant = await app.transforms.prepare('default', 'x.png', { w: 10 }, undefined)
  await app.transforms.read(variant)
  await app.assets.remove('default', 'x.png')
  t.equal(await app.transforms.invalidateAll(), 0, 'nothing was left to flush')
})
