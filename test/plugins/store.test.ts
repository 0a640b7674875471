// The store plugin alone on a bare instance: config, events, data, a fake schema registry.
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import Database from '../../lib/sqlite-driver.js'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import configPlugin from '../../plugins/config.js'
import dataPlugin from '../../plugins/data.js'
import eventsPlugin from '../../plugins/events.js'
import storePlugin from '../../plugins/store.js'
import clusterPlugin from '../../plugins/cluster.js'
import fp from 'fastify-plugin'
import { LocalBus } from '../../lib/cluster/bus.js'
import { createStore, type StoreOptions } from '../../lib/store/index.js'
import type { CollectionModel, ResolvedSchema, SchemaRegistry } from '../../types/schema.js'
import { STORES, databaseUrlFor, storeEnv, tempDir, testConfig, type Env } from '../helper.js'

const scope = { environment: 'default', locale: null }

const schema = (over: Partial<ResolvedSchema> = {}): ResolvedSchema => ({
  name: 'posts',
  reusable: false,
  strict: false,
  extends: null,
  fields: { title: { field_type: 'string' }, rank: { field_type: 'integer' } },
  default_sort: 'rank',
  ...over
})

/** A registry that only knows its collections' schemas. */
function fakeRegistry (schemas: ResolvedSchema[]): Pick<SchemaRegistry, 'collection' | 'collections'> {
  const model = (s: ResolvedSchema): CollectionModel => ({ schema: s } as unknown as CollectionModel)
  return {
    collection: (name) => { const s = schemas.find(x => x.name === name); return s === undefined ? null : model(s) },
    collections: () => schemas.map(model)
  }
}

async function bare (t: Test, dataDir: string, env: Env, schemas?: ResolvedSchema[]): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(configPlugin, { config: testConfig(dataDir, env) })
  await app.register(eventsPlugin)
  await app.register(dataPlugin)
  if (schemas !== undefined) app.decorate('schemas', fakeRegistry(schemas) as SchemaRegistry)
  await app.register(clusterPlugin)
  await app.register(storePlugin)
  await app.ready()
  t.teardown(() => app.close())
  return app
}

const expressionIndexes = (dataDir: string): string[] => {
  const db = new Database(path.join(dataDir, 'lectern.db'), { readonly: true })
  try {
    return db.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name LIKE 'ix:%'").pluck().all() as string[]
  } finally {
    db.close()
  }
}

for (const kind of STORES) {
  t.test(`store=${kind}`, async t => {
    t.test('decorates the configured store, open; closes it with the app; data survives', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const app = await bare(t, dataDir, await storeEnv(t, kind, dataDir))
      t.equal(app.store.kind, kind)
      await app.store.create(scope, 'posts', { slug: 'hello', status: 'published', data: { title: 'Hi' } })
      await app.close()
      await t.rejects(app.store.create(scope, 'posts', { slug: 'later', status: 'published', data: {} }), 'closed with the app')
      const again = await bare(t, dataDir, await storeEnv(t, kind, dataDir))
      t.equal((await again.store.get(scope, 'posts', 'hello'))?.data.title, 'Hi')
    })

    t.test('the change log keeps tombstones CMS_SYNC_RETENTION_DAYS', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      // A delete ten days ago, by a store on a clock set back.
      const past = createStore(kind, { dataDir, databaseUrl: await databaseUrlFor(t, kind, dataDir), clock: () => new Date(Date.now() - 10 * 86_400_000) })
      await past.open()
      await past.create(scope, 'posts', { slug: 'gone', status: 'published', data: {} })
      const tombstone = await past.delete(scope, 'posts', 'gone')
      await past.close()
      const kept = await bare(t, dataDir, { ...await storeEnv(t, kind, dataDir), CMS_SYNC_RETENTION_DAYS: '11' })
      t.equal(await kept.store.changes.horizon(), 0, 'kept for 11 days')
      t.same((await kept.store.changes.since(0, 10, scope)).records.map(r => [r.seq, r.op]), [[tombstone, 'delete']])
      await kept.close()
      // Compaction at open, as the setting says.
      const dropped = await bare(t, dataDir, { ...await storeEnv(t, kind, dataDir), CMS_SYNC_RETENTION_DAYS: '9' })
      t.equal(await dropped.store.changes.horizon(), tombstone, 'dropped after 9')
      t.same((await dropped.store.changes.since(0, 10, scope)).records, [])
    })

    t.test('schema.created makes the storage location in every environment', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const app = await bare(t, dataDir, { ...await storeEnv(t, kind, dataDir), CMS_ENVIRONMENTS: 'main,preview', CMS_LOCALES: 'en,fr' })
      app.events.emit({ event: 'schema.created', name: 'articles' })
      if (kind === 'file') {
        const dirs = ['main/articles/en', 'main/articles/fr', 'preview/articles/en', 'preview/articles/fr'].map(d => path.join(dataDir, 'content', d))
        // The listener runs without being awaited: poll for its result.
        const deadline = Date.now() + 5000
        while (!dirs.every(d => existsSync(d)) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 5))
        for (const dir of dirs) t.ok(existsSync(dir), path.relative(dataDir, dir))
      } else {
        t.pass('SQLite rows need no location')
      }
    })

    t.test('a close right after schema.created waits for the storage location, and nothing is written after it', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const app = await bare(t, dataDir, { ...await storeEnv(t, kind, dataDir), CMS_ENVIRONMENTS: 'main,preview,staging', CMS_LOCALES: 'en,fr,de,it' })
      app.events.emit({ event: 'schema.created', name: 'articles' })
      await app.close()
      const content = path.join(dataDir, 'content')
      const listing = (): string[] => kind === 'file' ? readdirSync(content, { recursive: true }).map(String).sort() : []
      const made = listing()
      if (kind === 'file') {
        const leaves = ['main', 'preview', 'staging'].flatMap(env => ['en', 'fr', 'de', 'it'].map(locale => path.join(env, 'articles', locale)))
        t.same(leaves.filter(leaf => !made.includes(leaf)), [], 'every environment and locale folder is there at close')
      }
      await new Promise(resolve => setTimeout(resolve, 100))
      t.same(listing(), made, 'and nothing more is made after it')
    })
  })
}

t.test('indexes from the registry at start and after schema events (sqlite)', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const schemas = [schema()]
  const app = await bare(t, dataDir, { CMS_STORE: 'sqlite' }, schemas)
  t.ok(expressionIndexes(dataDir).some(sql => sql.includes("'$.rank'") && sql.includes('DESC')), 'default_sort index at start')
  schemas[0] = schema({ default_sort: 'title', default_order: 'asc', fields: { title: { field_type: 'string', unique: true } } })
  schemas.push(schema({ name: 'authors', default_sort: null, fields: { email: { field_type: 'email', unique: true } } }))
  app.events.emit({ event: 'schema.updated', name: 'posts' })
  // Preparing is asynchronous (a store across the network creates its indexes there).
  await app.events.settled()
  const after = expressionIndexes(dataDir)
  t.notOk(after.some(sql => sql.includes("'$.rank'")), 'indexes of the old schema are dropped')
  t.ok(after.some(sql => sql.includes("'$.title'") && sql.includes("WHERE collection = 'posts'")))
  t.ok(after.some(sql => sql.includes("'$.email'") && sql.includes("WHERE collection = 'authors'")), 'every collection is prepared')
  t.equal((await app.store.list(scope, 'posts', { page: 1, perPage: 20, sort: [], status: 'all', q: null, fields: null, filters: [], after: null })).total, 0)
})

t.test('CMS_STORE=postgres: the store is made with CMS_DATABASE_URL and CMS_DATABASE_POOL (contract §12)', async t => {
  const made: Array<{ kind: string, options: StoreOptions }> = []
  const real = createStore('sqlite', { dataDir: tempDir(t) })
  // The store's own tests open a real one (test/lib/store/); here only what the plugin hands it.
  const { default: plugin } = await t.mockImport<typeof import('../../plugins/store.js')>('../../plugins/store.js', {
    '../../lib/store/index.js': { createStore: (kind: string, options: StoreOptions) => { made.push({ kind, options }); return real } }
  })
  const app = Fastify()
  const url = 'postgres://lectern:pw@127.0.0.1:5432/lectern'
  await app.register(configPlugin, { config: testConfig(path.join(tempDir(t), 'data'), { CMS_STORE: 'postgres', CMS_DATABASE_URL: url, CMS_DATABASE_POOL: '3' }) })
  await app.register(eventsPlugin)
  await app.register(dataPlugin)
  // The bus the store announces its writes on (its origin goes to the store), without a database here.
  class Bus extends LocalBus { override readonly origin: string = 'this-process' }
  await app.register(fp(async f => { f.decorate('cluster', new Bus()) }, { name: 'cluster' }))
  await app.register(plugin)
  await app.ready()
  t.teardown(() => app.close())
  t.equal(made.length, 1)
  t.equal(made[0]?.kind, 'postgres')
  t.match(made[0]?.options, { databaseUrl: url, databasePool: 3, origin: 'this-process' })
  t.equal(app.store, real)
})
