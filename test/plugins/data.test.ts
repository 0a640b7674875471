import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import configPlugin from '../../plugins/config.js'
import { DataDirLockedError } from '../../lib/data-lock.js'
import dataPlugin from '../../plugins/data.js'
import { tempDir, testConfig, type Env } from '../helper.js'

interface Started { app: FastifyInstance, logs: Array<{ msg: string, schemas?: string[] }> }

/** config + data on a bare instance, logging into an array. */
async function start (t: Test, dataDir: string, env: Env = {}): Promise<Started> {
  const logs: Array<{ msg: string, schemas?: string[] }> = []
  const app = Fastify({ logger: { level: 'info', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } })
  t.teardown(async () => { await app.close() })
  await app.register(configPlugin, { config: testConfig(dataDir, env) })
  await app.register(dataPlugin)
  await app.ready()
  return { app, logs }
}

const EXAMPLES = ['author.json', 'category.json', 'headline.json', 'post.json5', 'seo.json5']

t.test('first start with CMS_SEED on: creates the folders, copies the example schemas, logs it', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const { app, logs } = await start(t, dataDir, { CMS_SEED: 'true' })
  t.equal(app.dataSeeded, true)
  for (const dir of ['', 'types', 'assets']) t.ok(existsSync(path.join(dataDir, dir)), `${dir || 'data dir'} exists`)
  t.strictSame(readdirSync(path.join(dataDir, 'types')).sort(), EXAMPLES)
  const line = logs.find(l => l.msg.startsWith('first start'))
  t.ok(line, 'seeding is logged')
  t.strictSame(line?.schemas?.sort(), EXAMPLES)
})

t.test('CMS_SEED=false: the folders are created, nothing is copied', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const { app } = await start(t, dataDir, { CMS_SEED: 'false' })
  t.equal(app.dataSeeded, false)
  t.strictSame(readdirSync(path.join(dataDir, 'types')), [])
  t.ok(existsSync(path.join(dataDir, 'assets')))
})

t.test('an existing data dir (a later start) is not seeded', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  mkdirSync(path.join(dataDir, 'types'), { recursive: true })
  writeFileSync(path.join(dataDir, 'types', 'mine.json'), '{"name":"mine","fields":{}}')
  const { app } = await start(t, dataDir, { CMS_SEED: 'true' })
  t.equal(app.dataSeeded, false)
  t.strictSame(readdirSync(path.join(dataDir, 'types')), ['mine.json'])
})

t.test('a restart after a seeded first start does not seed again', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const first = await start(t, dataDir, { CMS_SEED: 'true' })
  t.equal(first.app.dataSeeded, true)
  await first.app.close()
  const second = await start(t, dataDir, { CMS_SEED: 'true' })
  t.equal(second.app.dataSeeded, false)
})

t.test('a data dir created by another plugin first still counts as a first start', async t => {
  // assets/store/webhooks may run before this plugin and create <data>/assets, a database, ...
  const dataDir = path.join(tempDir(t), 'data')
  mkdirSync(path.join(dataDir, 'assets'), { recursive: true })
  const { app } = await start(t, dataDir, { CMS_SEED: 'true' })
  t.equal(app.dataSeeded, true)
})

t.test('an existing CMS_TYPES_DIR is the operator\'s own and is never seeded', async t => {
  const root = tempDir(t)
  const types = path.join(root, 'my-types')
  mkdirSync(types)
  const { app } = await start(t, path.join(root, 'data'), { CMS_SEED: 'true', CMS_TYPES_DIR: types, CMS_ASSETS_DIR: path.join(root, 'files') })
  t.equal(app.dataSeeded, false)
  t.strictSame(readdirSync(types), [])
  t.ok(existsSync(path.join(root, 'files')), 'CMS_ASSETS_DIR is created')
})

t.test('the data dir is locked while the instance is open: a second one on it fails to start, a later one starts', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const first = await start(t, dataDir)
  await t.rejects(start(t, dataDir), new DataDirLockedError(dataDir))
  await first.app.close()
  const later = await start(t, dataDir)
  t.equal(later.app.dataSeeded, false)
})

t.test('CMS_STORE=postgres: no lock, several processes share the database and may share a data dir (contract §12)', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  // The data plugin never connects: any well-formed URL will do.
  const env = { CMS_STORE: 'postgres', CMS_DATABASE_URL: 'postgres://lectern:pw@127.0.0.1:1/lectern' }
  const first = await start(t, dataDir, env)
  const second = await start(t, dataDir, env)
  t.ok(first.app.hasDecorator('dataSeeded') && second.app.hasDecorator('dataSeeded'), 'both started')
  t.notOk(existsSync(path.join(dataDir, 'lectern.lock')), 'no lock file is made')
})
