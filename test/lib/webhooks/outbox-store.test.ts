// The outbox interface (lib/webhooks/outbox.ts OutboxStore) on both its databases: the data dir's
// SQLite and PostgreSQL's shared tables (postgres-outbox.ts) give the same answers; the shared one
// also hands each due delivery to one replica, and takes over a claim whose replica died.
import path from 'node:path'
import t, { type Test } from 'tap'
import { PostgresStore } from '../../../lib/store/postgres.js'
import { Outbox, SqliteOutboxStore, type NewDelivery, type OutboxStore } from '../../../lib/webhooks/outbox.js'
import { PostgresOutbox } from '../../../lib/webhooks/postgres-outbox.js'
import { STORES, tempDir } from '../../helper.js'
import { postgresUrl } from '../../fixtures/postgres.js'

const delivery = (id: string, url = 'http://a.example/hook'): NewDelivery => ({ id, event: 'content.updated', url, body: `{"id":"${id}"}` })
const pending = { status: 'pending' as const, lastStatus: 500, lastError: 'HTTP 500' }

/** `count` outboxes on one database: one for SQLite (a file is one process's), several for PostgreSQL. */
type Factory = (t: Test, count: number, leaseMs?: number) => Promise<OutboxStore[]>

const sqlite: Factory = async t => {
  const outbox = new SqliteOutboxStore(new Outbox(path.join(tempDir(t), 'outbox.db')))
  t.teardown(() => { outbox.close() })
  return [outbox]
}

const postgres: Factory = async (t, count, leaseMs) => {
  const databaseUrl = await postgresUrl(t, path.resolve(tempDir(t), 'outbox'))
  const outboxes: OutboxStore[] = []
  for (let i = 0; i < count; i++) {
    const store = new PostgresStore({ dataDir: tempDir(t), databaseUrl })
    t.teardown(async () => { await store.close() })
    await store.open()
    outboxes.push(await PostgresOutbox.open(store, leaseMs))
  }
  return outboxes
}

const factories: Array<[string, Factory]> = [['sqlite', sqlite], ...(STORES.includes('postgres') ? [['postgres', postgres] as [string, Factory]] : [])]

for (const [name, make] of factories) {
  t.test(`${name}: the same rows and answers`, async t => {
    const [outbox] = await make(t, 1) as [OutboxStore]
    t.equal(await outbox.announcedFloor(), null, 'no floor yet')
    t.equal(await outbox.enqueue([], 1000, 7), false, 'nothing to record')
    t.equal(await outbox.enqueue([delivery('a'), delivery('b', 'http://b.example/hook')], 1000, 7), true)
    t.equal(await outbox.enqueue([delivery('c')], 1000, 7), false, 'a seq is recorded once')
    t.equal(await outbox.enqueue([delivery('d')], 1500, null), true, 'events without a seq are always recorded')
    t.same([...await outbox.announcedAbove(0)], [7])

    t.same((await outbox.due(999, 10, [])).map(d => d.id), [], 'nothing due before its time')
    const due = await outbox.due(2000, 10, ['b'])
    t.same(due.map(d => d.id), ['a', 'd'], 'oldest due first, the excluded left out')
    t.same(due[0], { id: 'a', event: 'content.updated', url: 'http://a.example/hook', body: '{"id":"a"}', attempts: 0 })
    await outbox.recordAttempt('a', { ...pending, nextAttemptAt: 5000 }, 2000)
    await outbox.recordAttempt('d', { status: 'delivered', lastStatus: 200, lastError: null, nextAttemptAt: null }, 2000)
    t.match(await outbox.get('a'), { status: 'pending', attempts: 1, lastStatus: 500, lastError: 'HTTP 500', nextAttemptAt: 5000, updatedAt: new Date(2000).toISOString() })
    t.match(await outbox.get('d'), { status: 'delivered', attempts: 1, nextAttemptAt: null })
    t.equal(await outbox.get('nope'), undefined)

    const all = await outbox.list(null, 10, { offset: 0 })
    t.same(all.items.map(d => d.id), ['d', 'b', 'a'], 'newest first')
    t.equal(all.total, 3)
    const second = await outbox.list(null, 2, { afterSeq: (all.items[0]?.seq) as number })
    t.same(second.items.map(d => d.id), ['b', 'a'], 'keyset: after a delivery')
    t.same((await outbox.list('pending', 1, { offset: 1 })).items.map(d => d.id), ['a'])
    t.equal((await outbox.list('pending', 1, { offset: 0 })).total, 2)
    t.same((await outbox.list('delivered', 10, { afterSeq: 1e9 })).items.map(d => d.id), ['d'])

    t.equal(await outbox.abandonExcept(['http://a.example/hook'], 'gone', 3000), 1, 'b is no longer configured')
    t.match(await outbox.get('b'), { status: 'failed', lastError: 'gone', nextAttemptAt: null })
    t.equal(await outbox.nextDueAt([]), 5000)
    t.equal(await outbox.nextDueAt(['a']), null)
    t.equal(await outbox.prune(1), 1, 'the older of two finished deliveries pruned')
    t.equal(await outbox.prune(1), 0)

    await outbox.advanceFloor(9)
    await outbox.advanceFloor(8)
    t.equal(await outbox.announcedFloor(), 9, 'the floor never moves down')
    t.same([...await outbox.announcedAbove(0)], [], 'the seqs it covers are forgotten')
    t.ok(outbox.open)
    outbox.close()
    t.notOk(outbox.open)
  })
}

t.test('postgres: replicas share the outbox', { skip: !STORES.includes('postgres') && 'postgres is not among LECTERN_TEST_STORES' }, async t => {
  t.test('each due delivery is handed to one replica at a time', async t => {
    const [a, b] = await postgres(t, 2) as [OutboxStore, OutboxStore]
    t.equal(a.sharedPollMs !== null && a.sharedPollMs > 0, true, 'replicas look for left work')
    const ids = Array.from({ length: 20 }, (_, i) => `d${i}`)
    await a.enqueue(ids.slice(0, 10).map(id => delivery(id)), 1000, 1)
    await b.enqueue(ids.slice(10).map(id => delivery(id)), 1000, 2)
    const [byA, byB] = await Promise.all([a.due(2000, 15, []), b.due(2000, 15, [])])
    const got = [...byA, ...byB].map(d => d.id).sort()
    t.same(got, [...ids].sort(), 'every delivery handed out, none twice')
    t.same(await a.due(2000, 20, []), [], 'claimed: not handed out again')
    t.equal(await b.nextDueAt([]), 2000 + 60_000, 'the next chance: when the claims lapse')
    const first = (byA[0] ?? byB[0])?.id as string
    await a.recordAttempt(first, { ...pending, nextAttemptAt: 2500 }, 2000)
    t.same((await b.due(3000, 20, [])).map(d => d.id), [first], 'an attempt recorded ends the claim')
  })

  t.test('a claim whose replica died lapses and is taken over', async t => {
    const [a, b] = await postgres(t, 2, 100) as [OutboxStore, OutboxStore]
    await a.enqueue([delivery('x')], 1000, 1)
    t.same((await a.due(1000, 5, [])).map(d => d.id), ['x'])
    t.same(await b.due(1050, 5, []), [], 'still claimed')
    t.same((await b.due(1100, 5, [])).map(d => d.id), ['x'], 'the lease over: taken over')
  })

  t.test('a seq recorded by two replicas at once is recorded once', async t => {
    const [a, b] = await postgres(t, 2) as [OutboxStore, OutboxStore]
    const results = await Promise.all([a.enqueue([delivery('live')], 1000, 5), b.enqueue([delivery('replayed')], 1000, 5)])
    t.same(results.filter(Boolean).length, 1, 'one of them records')
    t.equal((await a.list(null, 10, { offset: 0 })).total, 1)
  })
})
