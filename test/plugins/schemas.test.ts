import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import configPlugin from '../../plugins/config.js'
import dataPlugin from '../../plugins/data.js'
import eventsPlugin from '../../plugins/events.js'
import clusterPlugin from '../../plugins/cluster.js'
import storePlugin from '../../plugins/store.js'
import schemasPlugin from '../../plugins/schemas.js'
import { STORES, storeEnv, tempDir, testConfig, type StoreName } from '../helper.js'

interface Started { app: FastifyInstance, types: string, logs: Array<{ level: number, msg: string }> }

async function start (t: Test, files: Record<string, string> = {}, store: StoreName = 'sqlite'): Promise<Started> {
  const dataDir = path.join(tempDir(t), 'data')
  const types = path.join(dataDir, 'types')
  mkdirSync(types, { recursive: true })
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(types, file), text)
  const logs: Array<{ level: number, msg: string }> = []
  const app = Fastify({ logger: { level: 'info', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } })
  t.teardown(async () => { await app.close() })
  await app.register(configPlugin, { config: testConfig(dataDir, await storeEnv(t, store, dataDir)) })
  await app.register(eventsPlugin)
  await app.register(dataPlugin)
  await app.register(clusterPlugin)
  await app.register(storePlugin)
  await app.register(schemasPlugin)
  await app.ready()
  return { app, types, logs }
}

for (const store of STORES) {
  t.test(`${store}: decorates fastify.schemas with the loaded registry`, async t => {
    const { app, logs } = await start(t, {
      'seo.json5': '{ name: "seo", reusable: true, fields: { meta_title: { field_type: "string" } } }',
      'post.json': '{ "name": "post", "extends": "seo", "fields": { "title": { "field_type": "string" } } }',
      'orphan.json': '{ "name": "orphan", "extends": "ghost", "fields": {} }',
      'loop.json': '{ "name": "loop", "extends": "loop2", "fields": {} }',
      'loop2.json': '{ "name": "loop2", "extends": "loop", "fields": {} }',
      'broken.json': '{ "name": "broken", '
    }, store)
    t.strictSame(app.schemas.names(), ['loop', 'loop2', 'orphan', 'post', 'seo'])
    t.strictSame(app.schemas.collections().map(m => m.schema.name), ['post'])
    t.equal(app.schemas.collection('orphan'), null)
    const warnings = logs.filter(l => l.level === 40).map(l => l.msg)
    t.ok(warnings.includes("schema 'orphan' is left out: extends: unknown schema 'ghost'"), 'unknown parent logged at start-up')
    t.ok(warnings.includes("schema 'loop' is left out: extends: cycle loop → loop2 → loop"), 'cycle logged at start-up')
    t.ok(warnings.some(m => m.startsWith('schema file skipped: it cannot be parsed')), 'unparsable file logged')
    t.ok(logs.some(l => l.msg === 'schemas loaded'))
  })
}

t.test('depends on config, data and events', async t => {
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  await app.register(configPlugin, { config: testConfig(path.join(tempDir(t), 'data')) })
  await t.rejects(async () => {
    await app.register(schemasPlugin)
    await app.ready()
  }, /dependency 'data' of plugin 'schemas' is not registered/)
})

for (const store of STORES) {
  t.test(`${store}: closing waits for a schema write in flight`, async t => {
    const { app, types } = await start(t, {}, store)
    const write = app.schemas.create({ name: 'late', fields: {} })
    await app.close()
    await write
    t.ok(existsSync(path.join(types, 'late.json')), 'the write finished before close resolved')
  })
}
