// Two apps of this process on one PostgreSQL schema, sharing the assets and types directories,
// each with its own data dir: what two replicas are (contract §12), without spawning servers (the
// real processes: test/replicas/shared-files.test.ts). An asset deleted through one is forgotten
// by the other, its transform variants dropped from the other's own cache; a malformed
// announcement is ignored.
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { ASSET_TOPIC } from '../../lib/cluster/bus.js'
import { STORES, build, tempDir } from '../helper.js'
import { png, upload } from '../lib/assets/fixtures.js'

/** The variant files in an app's own transform cache. */
function variants (app: FastifyInstance): string[] {
  const dir = path.join(app.config.dataDir, 'cache', 'transforms')
  return existsSync(dir) ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter(e => e.isFile()).map(e => e.name) : []
}

async function until (check: () => boolean, ms: number): Promise<number> {
  const start = performance.now()
  while (!check()) {
    if (performance.now() - start > ms) return Infinity
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  return performance.now() - start
}

t.test('an asset deleted on one replica is forgotten by the other within 1 s', { skip: STORES.includes('postgres') ? false : 'postgres is not among LECTERN_TEST_STORES' }, async t => {
  const a = await build(t, { CMS_STORE: 'postgres' })
  const b = await build(t, {
    CMS_STORE: 'postgres',
    CMS_DATABASE_URL: a.config.databaseUrl as string,
    CMS_ASSETS_DIR: a.config.assetsDir,
    CMS_TYPES_DIR: a.config.typesDir
  }, { dataDir: path.join(tempDir(t), 'b') })
  t.equal((await upload(a, [{ name: 'cat.png', data: await png(40, 40) }])).statusCode, 201)
  t.equal((await b.inject({ url: '/api/transform/cat.png?w=10&format=png' })).statusCode, 200, 'the other replica transforms it')
  t.equal(variants(b).length, 1, 'into its own cache')

  // Malformed or foreign announcements change nothing and stop nothing.
  for (const data of [{}, { environment: '../..', path: '/api/assets/cat.png' }, { environment: 'default', path: '/api/assets/../x' }]) {
    await a.cluster.publish(ASSET_TOPIC, data)
  }
  t.equal((await a.inject({ method: 'DELETE', url: '/api/assets/cat.png' })).statusCode, 204)
  const took = await until(() => variants(b).length === 0, 3000)
  t.ok(took <= 1000, `the other replica's variants dropped within 1 s (took ${Math.round(took)} ms)`)
  t.equal((await b.inject({ url: '/api/transform/cat.png?w=10&format=png' })).statusCode, 404)
  t.equal((await b.inject({ url: '/api/assets/cat.png' })).statusCode, 404)
})
