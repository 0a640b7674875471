// SQLite index builds off the main thread (issue 28 item 14): while a schema change builds its
// indexes over 30,000 rows, reads keep answering and the event loop never stalls for long
// (measured with perf_hooks' monitorEventLoopDelay; before, it stalled for the whole build, about
// 0.6 s); a write sent meanwhile waits for the build and lands; a failed build keeps the indexes
// it found and lets writes go on.
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as pause } from 'node:timers/promises'
import Database from '../../../lib/sqlite-driver.js'
import t, { type Test } from 'tap'
import { SqliteStore, DATABASE_FILE } from '../../../lib/store/sqlite.js'
import type { ResolvedSchema } from '../../../types/schema.js'
import type { Scope } from '../../../types/scope.js'
import { tempDir } from '../../helper.js'

const ROWS = 30_000
const scope: Scope = { environment: 'default', locale: null }

const schema: ResolvedSchema = {
  name: 'posts',
  fields: {
    title: { field_type: 'string' },
    views: { field_type: 'integer' },
    score: { field_type: 'number' },
    flag: { field_type: 'boolean' },
    published: { field_type: 'date' },
    category: { field_type: 'string' },
    code: { field_type: 'string', unique: true }
  },
  reusable: false,
  strict: false,
  extends: null,
  default_sort: 'views',
  default_order: 'desc'
}

/** A store on a database holding `rows` entries of `posts`, written in one transaction behind it (fast). */
async function storeWith (t: Test, rows: number, extra: (db: Database.Database) => void = () => {}): Promise<{ store: SqliteStore, dataDir: string }> {
  const dataDir = path.join(tempDir(t), 'data')
  const first = new SqliteStore({ dataDir })
  await first.open()
  await first.close()
  const db = new Database(path.join(dataDir, DATABASE_FILE))
  const insert = db.prepare("INSERT INTO entries (environment, collection, locale, slug, status, created_at, updated_at, data) VALUES ('default', 'posts', '', ?, 'published', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z', ?)")
  db.transaction(() => {
    for (let i = 0; i < rows; i++) {
      insert.run(`e${i}`, JSON.stringify({ title: `Post ${i}`, views: i % 977, score: i / 7, flag: i % 2 === 0, published: `2024-0${1 + (i % 9)}-1${i % 10}`, category: `c${i % 13}`, code: `k${i}` }))
    }
  })()
  extra(db)
  db.close()
  const store = new SqliteStore({ dataDir })
  await store.open()
  t.teardown(() => store.close())
  return { store, dataDir }
}

function indexNames (dataDir: string, collection = 'posts'): string[] {
  const db = new Database(path.join(dataDir, DATABASE_FILE), { readonly: true })
  try {
    return db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE ? ORDER BY name").pluck().all(`ix:${collection}:%`) as string[]
  } finally {
    db.close()
  }
}

t.test('reads answer while a schema change builds its indexes; a write waits for it', async t => {
  const { store, dataDir } = await storeWith(t, ROWS)
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  // The histogram measures from its first tick on.
  await pause(20)
  const progress = { done: false }
  const started = performance.now()
  const build = store.prepareCollection(schema).finally(() => { progress.done = true })
  const write = store.create(scope, 'posts', { slug: 'during', status: 'published', data: { title: 'During', code: 'during' }, unique: ['code'] })
  let reads = 0
  while (!progress.done) {
    const entry = await store.get(scope, 'posts', `e${(reads * 7919) % ROWS}`)
    if (entry === undefined) t.fail('a read found nothing')
    if (!progress.done) reads++
    // Paced, as requests come: a loop of back-to-back reads would starve the build of the CPU it shares.
    await pause(2)
  }
  await build
  const buildMs = performance.now() - started
  // A tick after the build, so a stall at its very end is counted too.
  await pause(20)
  delay.disable()
  const stallMs = delay.max / 1e6
  t.comment(`indexes over ${ROWS} rows built in ${Math.round(buildMs)} ms; ${reads} reads answered meanwhile; longest event-loop stall ${stallMs.toFixed(1)} ms`)
  t.ok(reads > 0, 'reads were answered during the build')
  t.ok(stallMs < Math.max(buildMs / 2, 100), 'the event loop never stalled for the build')
  t.equal((await write).entry.slug, 'during', 'the write sent during the build landed after it')
  t.equal(indexNames(dataDir).length, 7, 'every index is there (the default sort is the views index)')
  t.equal(await store.findByValue(scope, 'posts', 'code', 'k123', null), 'e123', 'and serves lookups')
})

t.test('a failed build keeps the indexes it found, and writes go on', async t => {
  // A row SQLite's JSON functions cannot read, written after the open's check: the build fails.
  // Enough rows for a build in the worker thread.
  const { store, dataDir } = await storeWith(t, 1500)
  await store.prepareCollection({ ...schema, name: 'other', fields: { title: { field_type: 'string' } } })
  const before = indexNames(dataDir, 'other')
  t.ok(before.length > 0, 'a first build')
  const db = new Database(path.join(dataDir, DATABASE_FILE))
  // The collection's indexes refuse the row: it comes in without them, as from an older database.
  for (const name of before) db.exec(`DROP INDEX "${name}"`)
  db.prepare("INSERT INTO entries (environment, collection, locale, slug, status, created_at, updated_at, data) VALUES ('default', 'other', '', 'bad', 'draft', 'x', 'x', '{')").run()
  db.close()
  await t.rejects(store.prepareCollection({ ...schema, name: 'other' }), /malformed JSON/)
  t.strictSame(indexNames(dataDir, 'other'), [], 'rolled back: nothing of it is kept')
  await t.resolves(store.prepareCollection(schema), 'a later build runs')
  t.equal(indexNames(dataDir).length, 7)
  const write = await store.create(scope, 'posts', { slug: 'after', status: 'published', data: { title: 'After' } })
  t.equal(write.entry.slug, 'after', 'writes go on')
})

t.test('a small table builds its indexes at once', async t => {
  const { store, dataDir } = await storeWith(t, 10)
  await store.prepareCollection(schema)
  t.equal(indexNames(dataDir).length, 7)
  await store.prepareCollection({ ...schema, fields: { title: { field_type: 'string' } } })
  // A default sort on a field the schema no longer declares is no sort (contract §4), so no index either.
  t.equal(indexNames(dataDir).length, 1, 'a schema change drops what it no longer wants (title is kept)')
  t.equal(await store.findByValue(scope, 'posts', 'title', 'Post 3', null), 'e3')
})
