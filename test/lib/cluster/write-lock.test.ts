// The advisory lock of schema writes (lib/cluster/write-lock.ts) on the suite's PostgreSQL: two
// stores on one schema stand for two processes sharing the database.
import path from 'node:path'
import t, { type Test } from 'tap'
import { AdvisoryLock } from '../../../lib/cluster/write-lock.js'
import { PostgresStore } from '../../../lib/store/postgres.js'
import { STORES, tempDir } from '../../helper.js'
import { postgresUrl } from '../../fixtures/postgres.js'

async function openStore (t: Test, url: string, dataDir: string): Promise<PostgresStore> {
  const store = new PostgresStore({ dataDir, environments: [], locales: [], databaseUrl: url })
  await store.open()
  t.teardown(async () => { await store.close() })
  return store
}

t.test('one holder at a time across processes; released after a failure; other names and schemas do not wait', { skip: STORES.includes('postgres') ? false : 'postgres is not among LECTERN_TEST_STORES' }, async t => {
  const dataDir = tempDir(t)
  const url = await postgresUrl(t, path.resolve(dataDir))
  const stores = [await openStore(t, url, dataDir), await openStore(t, url, dataDir)]
  const locks = stores.map(s => new AdvisoryLock(s, 'schemas'))
  let holders = 0
  let most = 0
  const order: number[] = []
  await Promise.all(Array.from({ length: 6 }, async (_, i) => {
    await (locks[i % 2] as AdvisoryLock).run(async () => {
      most = Math.max(most, ++holders)
      // Yield to the event loop (and the other store's connection) while holding it.
      await new Promise(resolve => setImmediate(resolve))
      await stores[(i + 1) % 2]?.execute('SELECT 1')
      order.push(i)
      holders--
    })
  }))
  t.equal(most, 1, 'never two holders at once')
  t.equal(order.length, 6)

  await t.rejects((locks[0] as AdvisoryLock).run(async () => { throw new Error('write failed') }), /write failed/)
  t.equal(await (locks[1] as AdvisoryLock).run(async () => 'taken'), 'taken', 'a failed task released the lock')

  // Another name, or another Lectern's schema in the same database: a lock of its own.
  const other = await openStore(t, await postgresUrl(t), tempDir(t))
  const inner = await (locks[0] as AdvisoryLock).run(async () => await Promise.all([
    new AdvisoryLock(stores[1] as PostgresStore, 'assets').run(async () => 'other name'),
    new AdvisoryLock(other, 'schemas').run(async () => 'other schema')
  ]))
  t.strictSame(inner, ['other name', 'other schema'])
})
