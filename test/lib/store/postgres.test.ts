// What only the PostgreSQL store has, which the contract suite (contract.test.ts) cannot see: its
// migrations under a lock, its rules decided across processes (two stores on one schema stand for
// two replicas), the change log read while other processes write, outages, and its data's text.
import net from 'node:net'
import path from 'node:path'
import t, { type Test } from 'tap'
import pg from 'pg'
import { CmsError } from '../../../lib/errors.js'
import { PostgresStore, isUnreachable } from '../../../lib/store/postgres.js'
import { MIGRATIONS } from '../../../lib/store/postgres-schema.js'
import { holderSql } from '../../../lib/store/postgres-write.js'
import { parseListQuery } from '../../../lib/query/parse.js'
import { numbered, postgresDialect } from '../../../lib/query/postgres-dialect.js'
import { sqlBuilder } from '../../../lib/query/sql.js'
import type { StoreOptions } from '../../../lib/store/index.js'
import type { Filter } from '../../../types/query.js'
import type { ResolvedSchema } from '../../../types/schema.js'
import type { ChangeRecord } from '../../../types/changes.js'
import type { EntryInput, StoredWrite } from '../../../types/store.js'
import { tempDir } from '../../helper.js'
import { postgresUrl, suiteDatabaseUrl } from '../../fixtures/postgres.js'

const scope = { environment: 'default', locale: null }
const input = (slug: string, data: Record<string, unknown> = {}, unique?: string[]): EntryInput => ({ slug, status: 'published', data, unique })
const schema: ResolvedSchema = { name: 'posts', fields: { title: { field_type: 'string', unique: true }, views: { field_type: 'integer' } }, reusable: false, strict: false, extends: null, default_sort: 'views', default_order: 'desc' }

/** `count` closed stores on one fresh schema (replicas of one database). */
async function replicas (t: Test, count: number, options: Partial<StoreOptions> = {}): Promise<PostgresStore[]> {
  const dataDir = path.join(tempDir(t), 'data')
  const databaseUrl = await postgresUrl(t, path.resolve(dataDir))
  const stores = Array.from({ length: count }, () => new PostgresStore({ dataDir, databaseUrl, ...options }))
  t.teardown(async () => { for (const store of stores) await store.close() })
  return stores
}

async function opened (t: Test, count: number): Promise<PostgresStore[]> {
  const stores = await replicas(t, count)
  for (const store of stores) await store.open()
  return stores
}

t.test('postgres store', async t => {
  t.test('migrations: stores opening at once all come up, and the layout is made once', async t => {
    const stores = await replicas(t, 4)
    await Promise.all(stores.map(async store => { await store.open() }))
    for (const store of stores) await t.resolves(store.ping())
    const client = new pg.Client({ connectionString: (stores[0] as unknown as { url: string }).url })
    await client.connect()
    const { rows } = await client.query('SELECT version FROM lectern_migrations')
    await client.end()
    t.same(rows, MIGRATIONS.map(m => ({ version: m.version })), 'one record per migration')
    await (stores[0] as PostgresStore).create(scope, 'posts', input('a'))
    t.ok(await (stores[3] as PostgresStore).get(scope, 'posts', 'a'), 'one database')
  })

  t.test('20 racing creates of one slug over two stores: exactly one wins', async t => {
    const [one, two] = await opened(t, 2) as [PostgresStore, PostgresStore]
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, async (_, i) =>
      await (i % 2 === 0 ? one : two).create(scope, 'posts', input('race', { n: i }))))
    const won = outcomes.filter((o): o is PromiseFulfilledResult<StoredWrite> => o.status === 'fulfilled')
    t.equal(won.length, 1)
    t.ok(outcomes.every(o => o.status === 'fulfilled' || (o.reason as CmsError).code === 'CONFLICT'), 'the others conflict')
    t.same((await two.get(scope, 'posts', 'race'))?.data, won[0]?.value.entry.data)
    t.same((await one.get(scope, 'posts', 'race'))?.data, won[0]?.value.entry.data)
  })

  t.test('racing unique values over two stores: one holder per value', async t => {
    const [one, two] = await opened(t, 2) as [PostgresStore, PostgresStore]
    await one.prepareCollection(schema)
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, async (_, i) =>
      await (i % 2 === 0 ? one : two).create(scope, 'posts', input(`u${i}`, { title: `T${i % 4}` }, ['title']))))
    t.equal(outcomes.filter(o => o.status === 'fulfilled').length, 4, 'one create per value wins')
    t.ok(outcomes.every(o => o.status === 'fulfilled' || (o.reason as CmsError).code === 'VALIDATION_FAILED'))
    const titles = (await one.list(scope, 'posts', parseListQuery({ _sort: 'title' }, schema, { seesDrafts: true }))).items.map(e => e.data.title)
    t.same(titles, ['T0', 'T1', 'T2', 'T3'])
  })

  t.test('a batch sent at once: a write that fails (not a refusal) fails alone, the writes after it are sent again', async t => {
    const [store] = await opened(t, 1) as [PostgresStore]
    await store.prepareCollection(schema)
    await store.create(scope, 'posts', input('taken', { title: 'held' }, ['title']))
    // A title too long for a btree entry: its index refuses it with an error (54000), which aborts the transaction.
    const huge = Array.from({ length: 12_000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20000))).join('')
    const writes = [
      store.create(scope, 'posts', input('first', { title: 'a' }, ['title'])),
      store.create(scope, 'posts', input('clash', { title: 'held' }, ['title'])),
      store.create(scope, 'posts', input('huge', { title: huge }, ['title'])),
      store.create(scope, 'posts', input('taken', { title: 'b' }, ['title'])),
      store.update(scope, 'posts', input('nobody', { title: 'c' }, ['title'])),
      store.create(scope, 'posts', input('last', { title: 'd' }, ['title'])),
      store.delete(scope, 'posts', 'nothing')
    ]
    const [first, clash, failed, taken, missing, last, nothing] = await Promise.allSettled(writes)
    t.equal(first?.status, 'fulfilled')
    t.equal((clash as PromiseRejectedResult).reason.code, 'VALIDATION_FAILED', 'a refusal before the failure')
    t.equal(failed?.status, 'rejected')
    t.notOk((failed as PromiseRejectedResult).reason instanceof CmsError, 'the failure is its own error')
    t.equal((taken as PromiseRejectedResult).reason.code, 'CONFLICT', 'the rules still decide the writes sent again')
    t.equal((missing as PromiseRejectedResult).reason.code, 'NOT_FOUND')
    t.equal(nothing?.status === 'fulfilled' ? nothing.value : undefined, null, 'a delete of nothing: no seq')
    const seqs = [first, last].map(o => (o as PromiseFulfilledResult<StoredWrite>).value.seq)
    t.same(seqs, [2, 3], 'refused and failed writes take no seq')
    t.notOk(await store.get(scope, 'posts', 'huge'))
    t.equal((await store.get(scope, 'posts', 'last'))?.data.title, 'd')
    t.equal((await store.changes.since(0, 10, { environment: 'default', locale: null })).records.length, 3)
  })

  t.test('a write is a statement prepared once per connection, whose generic plan PostgreSQL keeps: no planning per write', async t => {
    // One connection, so the statements seen are the writes'.
    const [store] = await replicas(t, 1, { databasePool: 1 }) as [PostgresStore]
    await store.open()
    await store.prepareCollection(schema)
    for (let i = 0; i < 12; i++) await store.create(scope, 'posts', input(`g${i}`, { title: `t${i}` }, ['title']))
    await t.rejects(store.create(scope, 'posts', input('g99', { title: 't3' }, ['title'])), { code: 'VALIDATION_FAILED' })
    const { rows } = await store.execute("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE starts_with(name, 'lectern_write_')")
    t.equal(rows.length, 1, 'one statement for every create of the collection')
    const plans = rows[0] as { generic_plans: string, custom_plans: string }
    t.ok(Number(plans.generic_plans) >= 5, `planned once, run with its generic plan (${plans.generic_plans} generic, ${plans.custom_plans} custom)`)
    // The unique lookup's generic plan (values unknown) still walks the field's partial index: the collection is in the text.
    const params: unknown[] = []
    const lookup = numbered(`SELECT ${holderSql({ environment: 'default', collection: 'posts', locale: '' }, 'title', 'x', 'g1', params)}`, params)
    const client = new pg.Client({ connectionString: (store as unknown as { url: string }).url })
    await client.connect()
    t.teardown(() => client.end())
    await client.query('SET enable_seqscan = off')
    const plan = (await client.query(`EXPLAIN (GENERIC_PLAN) ${lookup}`)).rows.map(r => (r as Record<string, string>)['QUERY PLAN']).join('\n')
    t.match(plan, /Index Scan using lx_/, 'the unique lookup\'s generic plan uses the partial index')
  })

  t.test('seqs over two writing stores: a reader following since() never skips one', async t => {
    const [one, two, reader] = await opened(t, 3) as [PostgresStore, PostgresStore, PostgresStore]
    const filter = { environment: 'default', locale: null }
    const seen: ChangeRecord[] = []
    let position = 0
    const state = { writing: true }
    const read = async (): Promise<boolean> => {
      const page = await reader.changes.since(position, 7, filter)
      for (const record of page.records) if (record.seq <= position) t.fail(`seq ${record.seq} at or below the position ${position}`)
      seen.push(...page.records)
      position = page.upTo
      return page.more
    }
    const reading = (async () => { while (state.writing) await read() })()
    const writes: Array<Promise<number>> = []
    for (let i = 0; i < 120; i++) {
      const store = i % 2 === 0 ? one : two
      const slug = `k${i % 30}`
      writes.push(i < 30 ? store.create(scope, 'posts', input(slug)).then(w => w.seq) : store.update(scope, 'posts', input(slug, { i })).then(w => w.seq))
      if (i % 10 === 9) await new Promise(resolve => setImmediate(resolve))
    }
    const seqs = await Promise.all(writes)
    state.writing = false
    await reading
    while (await read());
    t.equal(new Set(seqs).size, 120, 'every write its own seq')
    // Every write's change was read, or a later change of its key replaced it before the reader got there.
    const latest = new Map<string, number>()
    for (const record of seen) latest.set(record.slug, Math.max(latest.get(record.slug) ?? 0, record.seq))
    for (const [i, seq] of seqs.entries()) {
      const slug = `k${i % 30}`
      if ((latest.get(slug) ?? 0) < seq) t.fail(`the change ${seq} of ${slug} was skipped`)
    }
    t.equal(position, Math.max(...seqs), 'the reader reached the last seq')
    t.equal(latest.size, 30)
  })

  t.test('the data comes back as written: key order, numbers, text JSONB cannot hold', async t => {
    const [store] = await opened(t, 1) as [PostgresStore]
    const data = { zeta: 1, alpha: { z: 'ü😀', a: [3, 1e21, 5323914579790551000, -0.5] }, mid: 'a\u0000b\u0001c', '': null, lone: '\uD800x' }
    const { entry } = await store.create(scope, 'posts', input('k', data))
    t.equal(JSON.stringify(entry.data), JSON.stringify(data))
    t.equal(JSON.stringify((await store.get(scope, 'posts', 'k'))?.data), JSON.stringify(data), 'get: byte for byte')
    const listed = await store.list(scope, 'posts', parseListQuery({ 'mid[contains]': '\u0000b' }, { ...schema, fields: { mid: { field_type: 'string' } } }, { seesDrafts: true }))
    t.equal(JSON.stringify(listed.items[0]?.data), JSON.stringify(data), 'list: byte for byte, found by text holding U+0000')
  })

  t.test('an unreachable database: every call rejects UNAVAILABLE at once, and the store recovers by itself', async t => {
    const target = new URL(suiteDatabaseUrl())
    const sockets = new Set<net.Socket>()
    const proxy = (port = 0): Promise<net.Server> => new Promise(resolve => {
      const server = net.createServer(socket => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname)
        sockets.add(socket).add(upstream)
        socket.pipe(upstream).pipe(socket)
        const end = (): void => { socket.destroy(); upstream.destroy() }
        socket.on('error', end).on('close', end)
        upstream.on('error', end).on('close', end)
      })
      server.listen(port, '127.0.0.1', () => { resolve(server) })
    })
    let server = await proxy()
    const port = (server.address() as net.AddressInfo).port
    const dataDir = path.join(tempDir(t), 'data')
    const direct = new URL(await postgresUrl(t, path.resolve(dataDir)))
    direct.hostname = '127.0.0.1'
    direct.port = String(port)
    const store = new PostgresStore({ dataDir, databaseUrl: direct.toString() })
    await store.open()
    t.teardown(async () => { await store.close(); server.close() })
    await store.create(scope, 'posts', input('a'))

    // The database goes away: the proxy stops and drops every connection.
    const stopped = new Promise(resolve => server.close(resolve))
    for (const socket of sockets) socket.destroy()
    await stopped
    const started = Date.now()
    const outcomes = await Promise.allSettled([store.ping(), store.get(scope, 'posts', 'a'), store.create(scope, 'posts', input('b')), store.changes.latestSeq()])
    t.same(outcomes.map(o => o.status === 'rejected' && o.reason instanceof CmsError ? o.reason.code : o.status), ['UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE'])
    t.ok(Date.now() - started < 5000, `rejected in ${Date.now() - started} ms, no hang`)

    server = await proxy(port)
    const back = Date.now()
    await t.resolves(store.ping(), 'back by itself once the database returns')
    t.comment(`ping after ${Date.now() - back} ms`)
    t.ok(await store.get(scope, 'posts', 'a'))
    await store.create(scope, 'posts', input('b'))
    t.ok(await store.get(scope, 'posts', 'b'))
  })

  t.test('a write waiting on the write lock past the query timeout: UNAVAILABLE, the process lives on, the store writes again', async t => {
    // node-postgres ends a pipelining connection whose statement ran past query_timeout; the
    // connection was checked out (the write's transaction), so its 'error' event had no listener
    // and ended the process: seen when index builds held the write lock for a minute.
    const [store] = await replicas(t, 1, { queryTimeoutMs: 300 }) as [PostgresStore]
    await store.open()
    const holder = new pg.Client({ connectionString: (store as unknown as { url: string }).url })
    await holder.connect()
    t.teardown(async () => { await holder.end() })
    await holder.query('BEGIN')
    await holder.query("SELECT pg_advisory_xact_lock(hashtextextended('lectern:write:' || current_schema(), 0))")
    const late = await store.create(scope, 'posts', input('late')).then(() => null, (err: unknown) => err)
    t.equal((late as CmsError | null)?.code, 'UNAVAILABLE', 'the write that waited too long is UNAVAILABLE')
    // The ended connection's events come after the answer: give them time to arrive.
    await new Promise(resolve => setTimeout(resolve, 500))
    await holder.query('ROLLBACK')
    await store.create(scope, 'posts', input('after'))
    t.ok(await store.get(scope, 'posts', 'after'), 'the store writes again')
    t.equal(await store.get(scope, 'posts', 'late'), undefined, 'the refused write wrote nothing')
  })

  t.test('a database that never answered: open rejects UNAVAILABLE', async t => {
    const closed = await new Promise<number>(resolve => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo
        server.close(() => { resolve(port) })
      })
    })
    const store = new PostgresStore({ dataDir: tempDir(t), databaseUrl: `postgres://u:secret@127.0.0.1:${closed}/db` })
    const err = await store.open().then(() => null, (e: unknown) => e) as CmsError | null
    t.equal(err?.code, 'UNAVAILABLE')
    t.notMatch(err?.message ?? '', /secret/, 'the password is never in the error')
    await t.rejects(store.ping(), /not open/)
  })

  t.test('a failed migration leaves nothing half done; a newer layout is refused', async t => {
    const [store] = await replicas(t, 1) as [PostgresStore]
    const url = (store as unknown as { url: string }).url
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    t.teardown(() => client.end())
    // A table in the way: the first migration fails at its first statement.
    await client.query('CREATE TABLE change_log (x int)')
    await t.rejects(store.open(), /already exists/)
    t.same((await client.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'entries'")).rows, [{ n: 0 }], 'rolled back whole')
    await client.query('DROP TABLE change_log')
    await store.open()
    t.equal(await store.contentFingerprint(), 'postgres:0')
    await store.create(scope, 'posts', input('a'))
    t.equal(await store.contentFingerprint(), 'postgres:1', 'the fingerprint follows the log')
    await store.close()
    await client.query('INSERT INTO lectern_migrations (version, applied_at) VALUES (99, $1)', [new Date().toISOString()])
    await t.rejects(store.open(), new RegExp(`layout version 99; this server understands ${String(MIGRATIONS.at(-1)?.version)}`))
  })

  t.test('since() with a baseline: an initial run leaves out what it cannot hold', async t => {
    const [store] = await opened(t, 1) as [PostgresStore]
    const main = { environment: 'default', locale: null }
    await store.create(scope, 'posts', input('kept'))
    await store.create(scope, 'posts', { slug: 'draft', status: 'draft', data: {} })
    await store.create(scope, 'posts', input('gone'))
    await store.delete(scope, 'posts', 'gone')
    const baseline = await store.changes.latestSeq()
    await store.create(scope, 'pages', input('later'))
    const slugs = async (publishedOnly: boolean, collections?: string[]): Promise<string[]> =>
      (await store.changes.since(0, 10, { ...main, collections, baseline: { seq: baseline, publishedOnly } })).records.map(r => r.slug)
    t.same(await slugs(false), ['kept', 'draft', 'later'], 'no tombstone at or below the baseline')
    t.same(await slugs(true), ['kept', 'later'], 'published only: no draft either')
    t.same(await slugs(false, ['pages']), ['later'])
  })

  t.test('the planner walks the collection\'s expression indexes for the builder\'s sort and lookups', async t => {
    const [store] = await replicas(t, 1) as [PostgresStore]
    await store.open()
    await store.prepareCollection(schema)
    await store.prepareCollection(schema)
    const client = new pg.Client({ connectionString: (store as unknown as { url: string }).url })
    await client.connect()
    t.teardown(() => client.end())
    const { rows } = await client.query("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'lx%'")
    t.equal(rows.length, 2, 'views (the default sort, descending) and title (unique, ascending): made once')
    const statistics = await client.query("SELECT stxname FROM pg_statistic_ext WHERE stxnamespace = current_schema()::regnamespace AND stxname LIKE 'lxs%'")
    t.equal(statistics.rows.length, 2, 'and statistics on each key')
    // On a table this small the planner would rather scan: forbid it, so the plan shows whether an index fits.
    await client.query('SET enable_seqscan = off')
    await client.query('SET enable_bitmapscan = off')
    const sql = sqlBuilder(postgresDialect)
    const query = parseListQuery({ title: 'a' }, schema, { seesDrafts: true })
    for (const [label, order, where] of [['default sort', sql.orderSql(query.sort, []), 'TRUE'], ['unique lookup', 'slug', sql.filterSql(query.filters[0] as Filter, [])]] as const) {
      const text = `EXPLAIN SELECT slug FROM entries WHERE environment = $1 AND collection = $2 AND locale = $3 AND ${where.replace('?', '$4')} ORDER BY ${order} LIMIT 20`
      const plan = (await client.query(text, where === 'TRUE' ? ['default', 'posts', ''] : ['default', 'posts', '', 'a'])).rows.map(r => (r as Record<string, string>)['QUERY PLAN']).join('\n')
      t.match(plan, /Index Scan using lx_/, `${label}: ${plan.split('\n')[1] ?? ''}`)
      if (label === 'default sort') t.notMatch(plan, /Sort/, 'no sort: the index yields the order')
    }
  })

  t.test('statistics on the keys: the planner knows how many rows a filter matches, and walks the sort\'s index', async t => {
    const [store] = await opened(t, 1) as [PostgresStore]
    const shop: ResolvedSchema = { ...schema, name: 'items', fields: { category: { field_type: 'string' }, score: { field_type: 'integer' } }, default_sort: 'score' }
    await store.prepareCollection(shop)
    const categories = ['news', 'guides', 'events', 'opinion', 'releases']
    await Promise.all(Array.from({ length: 3000 }, async (_, i) =>
      await store.create(scope, 'items', input(`i${i}`, { category: categories[i % 5], score: (i * 7919) % 1000 }))))
    const client = new pg.Client({ connectionString: (store as unknown as { url: string }).url })
    await client.connect()
    t.teardown(() => client.end())
    await client.query('ANALYZE entries')
    const query = parseListQuery({ category: 'news', 'score[gte]': '100', _sort: '-score', _per_page: '20' }, shop, { seesDrafts: true })
    const sql = sqlBuilder(postgresDialect)
    const params: unknown[] = ['default', 'items', '']
    const where = ['environment = ? AND collection = ? AND locale = ?', ...sql.conditionsSql(query, params)].join(' AND ')
    const text = numbered(`EXPLAIN SELECT slug FROM entries WHERE ${where} ORDER BY ${sql.orderSql(query.sort, [])} LIMIT 20`, params)
    const plan = (await client.query(text, params)).rows.map(r => (r as Record<string, string>)['QUERY PLAN']).join('\n')
    const scan = /Index Scan using (\S+)/.exec(plan)?.[1]
    const scoreIndex = (await client.query("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'lx%' AND indexdef LIKE '%score%'")).rows[0] as { indexname: string }
    t.equal(scan, scoreIndex.indexname, `the score index, walked in order: ${plan.split('\n')[0] ?? ''}`)
    t.notMatch(plan, /Sort/, 'no sort')
    t.match(plan, /rows=(\d{3,})/, 'a filter matching about a fifth of the rows is estimated so')
  })

  t.test('numbered pages read one after the other: each continues where the last ended, the same pages as OFFSET reads', async t => {
    const [store, fresh] = await opened(t, 2) as [PostgresStore, PostgresStore]
    await store.prepareCollection(schema)
    // Ties and missing values in the sort key (views, descending): the slug decides, and no value comes last.
    await Promise.all(Array.from({ length: 40 }, async (_, i) =>
      await store.create(scope, 'posts', input(`p${String(i).padStart(2, '0')}`, i % 9 === 0 ? {} : { views: i % 4 }))))
    const texts: string[] = []
    const spied = store as unknown as { query: (text: string, values: unknown[]) => Promise<unknown> }
    const query = spied.query.bind(store)
    spied.query = async (text, values) => { texts.push(text); return await query(text, values) }
    const pageOf = async (of: PostgresStore, page: number, filters: Record<string, string> = {}): Promise<string[]> =>
      (await of.list(scope, 'posts', parseListQuery({ ...filters, _per_page: '7', _page: String(page) }, schema, { seesDrafts: true }))).items.map(e => e.slug)
    // Six pages of 7, the last one holding 5.
    const walked: string[][] = []
    for (let page = 1; page <= 6; page++) walked.push(await pageOf(store, page))
    t.equal(texts.filter(text => text.includes('OFFSET')).length, 1, 'only the first page walked by offset')
    // The other store reads each page by its offset: last page first, so it never continues one.
    const offsets: string[][] = []
    for (let page = 6; page >= 1; page--) offsets.unshift(await pageOf(fresh, page))
    t.same(walked, offsets, 'the same pages')
    t.equal(walked.flat().length, 40)
    t.same(await pageOf(store, 3, { 'views[gte]': '1' }), await pageOf(fresh, 3, { 'views[gte]': '1' }), 'another query: its own pages')
    // A write moves the bucket's revision: the next page is read by its offset again, and sees the write.
    await store.create(scope, 'posts', input('a-first', { views: 9 }))
    fresh.noteChange(scope.environment, 'posts', scope.locale)
    texts.length = 0
    t.same(await pageOf(store, 2), await pageOf(fresh, 2), 'after a write: the page as it is now')
    t.equal(texts.filter(text => text.includes('OFFSET')).length, 1, 'read by its offset')
  })

  t.test('isUnreachable tells connection failures from statement failures', async t => {
    t.ok(isUnreachable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })))
    t.ok(isUnreachable(Object.assign(new Error('terminating connection'), { code: '57P01' })))
    t.ok(isUnreachable(new Error('Connection terminated unexpectedly')))
    t.notOk(isUnreachable(Object.assign(new Error('duplicate key'), { code: '23505' })))
    t.notOk(isUnreachable(new Error('syntax error')))
  })

  t.test('list counts are kept per bucket revision: a write of this store, or one another process announces, moves it', async t => {
    const [one, two] = await opened(t, 2) as [PostgresStore, PostgresStore]
    const query = parseListQuery({ _sort: 'title' }, schema, { seesDrafts: true })
    await one.create(scope, 'posts', input('a', { title: 'a' }))
    t.equal((await two.list(scope, 'posts', query)).total, 1)
    await one.create(scope, 'posts', input('b', { title: 'b' }))
    t.equal((await one.list(scope, 'posts', query)).total, 2, 'the writer counts its own write at once')
    // The other store hears of the write (in the app: the cluster bus, plugins/remote-changes.ts).
    const before = two.revision(scope, 'posts')
    two.noteChange(scope.environment, 'posts', scope.locale)
    t.ok(two.revision(scope, 'posts') > before)
    t.equal((await two.list(scope, 'posts', query)).total, 2, 'and counts it once told')
    const page = await two.list(scope, 'posts', parseListQuery({ _sort: 'title', _per_page: '1' }, schema, { seesDrafts: true }))
    t.equal(page.total, 2)
  })
})
