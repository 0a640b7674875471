// What only the SQLite store has: its database file. The rules every store follows are
// test/lib/store/contract.test.ts's.
import { existsSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { createStore } from '../../../lib/store/index.js'
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
  const { default: Database } = await import('better-sqlite3')
  const db = new Database(path.join(dataDir, 'lectern.db'), { readonly: true })
  t.teardown(() => db.close())
  t.same(db.prepare('SELECT environment, collection, locale, slug, status, data FROM entries').all(), [
    { environment: 'default', collection: 'posts', locale: '', slug: 'hello', status: 'published', data: '{"title":"Hi"}' }
  ])
})
