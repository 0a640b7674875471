// What only the SQLite store has: its database file. The rules every store follows are
// test/lib/store/contract.test.ts's.
import { existsSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { createStore } from '../../../lib/store/index.js'
import { SqliteStore } from '../../../lib/store/sqlite.js'
import type { ListQuery } from '../../../types/query.js'
import type { EntryInput } from '../../../types/store.js'
import { tempDir } from '../../helper.js'

const input = (slug: string, data: Record<string, unknown> = {}): EntryInput => ({ slug, status: 'published', data })

t.test('sqlite store: one database file in WAL mode', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const store = createStore('sqlite', { dataDir })
  await store.open()
  await store.create({ environment: 'default', locale: null }, 'posts', input('hello', { title: 'Hi' }))
  t.ok(existsSync(path.join(dataDir, 'lectern.db')))
  t.ok(existsSync(path.join(dataDir, 'lectern.db-wal')), 'write-ahead log')
  await store.close()
  const { default: Database } = await import('../../../lib/sqlite-driver.js')
  const db = new Database(path.join(dataDir, 'lectern.db'), { readonly: true })
  t.teardown(() => db.close())
  t.same(db.prepare('SELECT environment, collection, locale, slug, status, data FROM entries').all(), [
    { environment: 'default', collection: 'posts', locale: '', slug: 'hello', status: 'published', data: '{"title":"Hi"}' }
  ])
})

t.test('sqlite store: each entry cache holds at most 8 MiB of entries, counted by their data; the page cache is 16 MiB', async t => {
  const MIB = 1024 * 1024
  const store = new SqliteStore({ dataDir: path.join(tempDir(t), 'data') })
  await store.open()
  t.teardown(() => store.close())
  const scope = { environment: 'default', locale: null }
  const query: ListQuery = { page: 1, perPage: 100, sort: [], status: 'all', q: null, fields: null, filters: [], after: null }
  const large = 'x'.repeat(200_000)
  // 60 entries of 200 KB: 12 MB, over the bound, and far under the 20,000 entries each cache may hold.
  const N = 60
  const slugs = Array.from({ length: N }, (_, i) => `p${String(i).padStart(2, '0')}`)
  for (const slug of slugs) await store.create(scope, 'posts', input(slug, { body: `${slug} ${large}` }))

  for (const slug of slugs) t.equal((await store.get(scope, 'posts', slug))?.data.body, `${slug} ${large}`)
  let { keyed } = store.entryCaches
  t.ok(keyed.bytes <= 8 * MIB, `single reads: ${keyed.bytes} bytes kept`)
  t.ok(keyed.entries >= 38 && keyed.entries < N, `the last ${keyed.entries} read are kept`)
  t.ok(keyed.bytes >= keyed.entries * large.length, 'each counted for its data at least')

  const page = await store.list(scope, 'posts', query)
  t.same(page.items.map(e => e.slug), slugs)
  const { rows } = store.entryCaches
  t.ok(rows.bytes <= 8 * MIB && rows.entries >= 38 && rows.entries < N, `a page of ${N}: ${rows.entries} entries, ${rows.bytes} bytes kept`)

  t.same([...(await store.getMany(scope, 'posts', slugs)).keys()].sort(), slugs, 'getMany reads the ones let go')
  keyed = store.entryCaches.keyed
  t.ok(keyed.bytes <= 8 * MIB && keyed.entries < N)

  // Small entries: the bound in entries is the one that counts.
  for (let i = 0; i < 100; i++) await store.create(scope, 'tags', input(`t${i}`, { label: `Tag ${i}` }))
  await store.list(scope, 'tags', query)
  const small = store.entryCaches.rows
  t.ok(small.entries >= 100, `${small.entries} entries kept after a page of 100 small ones`)

  // The connection's page cache (a negative cache_size is KiB).
  const db = (store as unknown as { db: { pragma: (sql: string, options: { simple: true }) => unknown } }).db
  t.equal(db.pragma('cache_size', { simple: true }), -16 * 1024)
})

t.test('sqlite store: CMS_ENTRY_CACHE_BYTES bounds each entry cache; 0 keeps no entry, and reads are the same', async t => {
  const scope = { environment: 'default', locale: null }
  const query: ListQuery = { page: 1, perPage: 100, sort: [], status: 'all', q: null, fields: null, filters: [], after: null }
  for (const [bytes, most] of [[0, 0], [4096, 4096]] as const) {
    const store = new SqliteStore({ dataDir: path.join(tempDir(t), 'data'), entryCacheBytes: bytes })
    await store.open()
    t.teardown(() => store.close())
    for (let i = 0; i < 20; i++) await store.create(scope, 'posts', input(`p${i}`, { body: 'x'.repeat(1000) }))
    t.equal((await store.list(scope, 'posts', query)).items.length, 20)
    for (let i = 0; i < 20; i++) t.equal((await store.get(scope, 'posts', `p${i}`))?.data.body, 'x'.repeat(1000))
    const { rows, keyed } = store.entryCaches
    t.ok(rows.bytes <= most && keyed.bytes <= most, `${bytes} bytes: ${rows.bytes} and ${keyed.bytes} kept`)
    if (bytes === 0) t.same([rows.entries, keyed.entries], [0, 0], 'none kept')
    else t.ok(rows.entries > 0 && keyed.entries > 0, 'some kept')
  }
})
