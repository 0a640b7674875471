// The sync key with PostgreSQL (lib/sync/secret.ts loadSharedSyncSecret): one per schema, made once
// however many processes start together, and the store pool's public transaction (execute too).
import path from 'node:path'
import t, { type Test } from 'tap'
import { PostgresStore } from '../../../lib/store/postgres.js'
import { loadSharedSyncSecret } from '../../../lib/sync/secret.js'
import { STORES, tempDir } from '../../helper.js'
import { postgresUrl } from '../../fixtures/postgres.js'

/** `count` open stores on one fresh schema: replicas of one database, each with its own data dir. */
async function replicas (t: Test, count: number): Promise<PostgresStore[]> {
  const databaseUrl = await postgresUrl(t, path.resolve(tempDir(t), 'shared'))
  const stores = Array.from({ length: count }, () => new PostgresStore({ dataDir: tempDir(t), databaseUrl }))
  t.teardown(async () => { for (const store of stores) await store.close() })
  for (const store of stores) await store.open()
  return stores
}

t.test('PostgreSQL', { skip: !STORES.includes('postgres') && 'postgres is not among LECTERN_TEST_STORES' }, async t => {
  t.test('replicas starting together make one key and all read it', async t => {
    const stores = await replicas(t, 3)
    const keys = await Promise.all(stores.flatMap(store => [loadSharedSyncSecret(store), loadSharedSyncSecret(store)]))
    t.equal(keys[0]?.length, 32)
    t.equal(new Set(keys.map(k => k.toString('hex'))).size, 1, 'one key')
    const [first] = stores as [PostgresStore]
    t.equal((await first.execute('SELECT count(*)::int AS n FROM sync_key')).rows[0].n, 1, 'one row')
  })

  t.test('a key that is not 64 hex digits is refused', async t => {
    const [store] = await replicas(t, 1) as [PostgresStore]
    await loadSharedSyncSecret(store)
    await store.execute('UPDATE sync_key SET key = $1', ['nope'])
    await t.rejects(loadSharedSyncSecret(store), /sync_key.*64 hex digit/)
  })

  t.test('transaction commits what resolves and rolls back what throws', async t => {
    const [store] = await replicas(t, 1) as [PostgresStore]
    await store.execute('CREATE TABLE t (v int)')
    await store.transaction(async client => { await client.query('INSERT INTO t VALUES ($1)', [1]) })
    await t.rejects(store.transaction(async client => {
      await client.query('INSERT INTO t VALUES ($1)', [2])
      throw new Error('changed my mind')
    }), /changed my mind/)
    t.same((await store.execute('SELECT v FROM t ORDER BY v')).rows, [{ v: 1 }])
  })
})
