import { randomUUID } from 'node:crypto'
import path from 'node:path'
import Database from '../../../lib/sqlite-driver.js'
import t, { type Test } from 'tap'
import { Outbox, type NewDelivery } from '../../../lib/webhooks/outbox.js'
import { tempDir } from '../../helper.js'

const delivery = (url = 'http://a.test/hook', event: NewDelivery['event'] = 'content.created'): NewDelivery => {
  const id = randomUUID()
  return { id, event, url, body: JSON.stringify({ event, id }) }
}

function open (t: Test): Outbox {
  const outbox = new Outbox(path.join(tempDir(t), 'nested', 'outbox.db'))
  t.teardown(() => { outbox.close() })
  return outbox
}

t.test('an enqueued delivery is pending, due at once, and keeps its body', async t => {
  const outbox = open(t)
  const d = delivery()
  outbox.enqueue([d], 1000)
  t.same(outbox.due(999, 10, []), [], 'not due before it was recorded')
  t.same(outbox.due(1000, 10, []), [{ id: d.id, event: d.event, url: d.url, body: d.body, attempts: 0 }])
  t.match(outbox.get(d.id), { status: 'pending', attempts: 0, lastStatus: null, lastError: null, nextAttemptAt: 1000, createdAt: new Date(1000).toISOString() })
  t.equal(outbox.nextDueAt([]), 1000)
})

t.test('due: oldest first, limited, and skipping the ones in flight', async t => {
  const outbox = open(t)
  const [a, b, c] = [delivery(), delivery(), delivery()]
  outbox.enqueue([a, b], 10)
  outbox.enqueue([c], 5)
  t.same(outbox.due(100, 2, []).map(d => d.id), [c.id, a.id])
  t.same(outbox.due(100, 10, [c.id, a.id]).map(d => d.id), [b.id])
  t.same(outbox.due(100, 0, []), [])
  t.equal(outbox.nextDueAt([c.id]), 10)
  t.equal(outbox.nextDueAt([a.id, b.id, c.id]), null)
})

t.test('attempts are counted; finished deliveries are no longer due', async t => {
  const outbox = open(t)
  const [a, b, c] = [delivery(), delivery(), delivery()]
  outbox.enqueue([a, b, c], 0)
  outbox.recordAttempt(a.id, { status: 'pending', lastStatus: 500, lastError: 'HTTP 500', nextAttemptAt: 50 }, 1)
  outbox.recordAttempt(b.id, { status: 'delivered', lastStatus: 200, lastError: null, nextAttemptAt: 99 }, 2)
  outbox.recordAttempt(c.id, { status: 'failed', lastStatus: 404, lastError: 'HTTP 404', nextAttemptAt: null }, 3)
  t.match(outbox.get(a.id), { status: 'pending', attempts: 1, lastStatus: 500, lastError: 'HTTP 500', nextAttemptAt: 50, updatedAt: new Date(1).toISOString() })
  t.match(outbox.get(b.id), { status: 'delivered', attempts: 1, lastStatus: 200, nextAttemptAt: null })
  t.match(outbox.get(c.id), { status: 'failed', attempts: 1, lastStatus: 404, lastError: 'HTTP 404', nextAttemptAt: null })
  t.same(outbox.due(49, 10, []), [])
  t.same(outbox.due(50, 10, []).map(d => [d.id, d.attempts]), [[a.id, 1]])
  outbox.recordAttempt(b.id, { status: 'failed', lastStatus: 500, lastError: 'late', nextAttemptAt: null }, 4)
  t.match(outbox.get(b.id), { status: 'delivered', attempts: 1 }, 'a finished delivery is never changed again')
})

t.test('pending deliveries to URLs no longer configured are marked failed', async t => {
  const outbox = open(t)
  const keep = delivery('http://keep.test/')
  const drop = delivery('http://drop.test/')
  outbox.enqueue([keep, drop], 0)
  t.equal(outbox.abandonExcept(['http://keep.test/'], 'gone', 5), 1)
  t.match(outbox.get(drop.id), { status: 'failed', lastError: 'gone', nextAttemptAt: null, attempts: 0 })
  t.match(outbox.get(keep.id), { status: 'pending' })
})

t.test('list: newest first, filtered by status, paged, with the total', async t => {
  const outbox = open(t)
  const all = Array.from({ length: 5 }, () => delivery())
  for (const [i, d] of all.entries()) outbox.enqueue([d], i)
  outbox.recordAttempt(all[1]!.id, { status: 'delivered', lastStatus: 200, lastError: null, nextAttemptAt: null }, 9)
  const page1 = outbox.list(null, 2, { offset: 0 })
  t.equal(page1.total, 5)
  t.same(page1.items.map(d => d.id), [all[4]!.id, all[3]!.id])
  t.same(outbox.list(null, 2, { offset: 4 }).items.map(d => d.id), [all[0]!.id])
  const delivered = outbox.list('delivered', 10, { offset: 0 })
  t.same([delivered.total, delivered.items.map(d => d.id)], [1, [all[1]!.id]])
  t.equal(outbox.list('pending', 10, { offset: 0 }).total, 4)
  t.equal(outbox.list('failed', 10, { offset: 0 }).total, 0)

  // Keyset pages: after a delivery's seq, newest first, whatever the offset of that delivery now is.
  const [newest, second] = page1.items
  t.same(outbox.list(null, 2, { afterSeq: newest!.seq }).items.map(d => d.id), [all[3]!.id, all[2]!.id])
  outbox.enqueue([delivery()], 10)
  t.same(outbox.list(null, 2, { afterSeq: second!.seq }).items.map(d => d.id), [all[2]!.id, all[1]!.id], 'a newer delivery does not shift the page')
  t.same(outbox.list('pending', 10, { afterSeq: second!.seq }).items.map(d => d.id), [all[2]!.id, all[0]!.id], 'filtered by status')
  t.same(outbox.list(null, 2, { afterSeq: outbox.get(all[0]!.id)!.seq }).items, [], 'nothing after the oldest')
  t.equal(outbox.list(null, 2, { afterSeq: newest!.seq }).total, 6, 'the total is of every match')
})

t.test('prune keeps the newest finished deliveries and every pending one', async t => {
  const outbox = open(t)
  const all = Array.from({ length: 10 }, () => delivery())
  for (const d of all) outbox.enqueue([d], 0)
  for (const d of all.slice(0, 8)) outbox.recordAttempt(d.id, { status: 'delivered', lastStatus: 200, lastError: null, nextAttemptAt: null }, 1)
  t.equal(outbox.prune(3), 5)
  t.same(outbox.list('delivered', 10, { offset: 0 }).items.map(d => d.id), all.slice(5, 8).map(d => d.id).reverse())
  t.equal(outbox.list('pending', 10, { offset: 0 }).total, 2)
  t.equal(outbox.prune(3), 0, 'nothing more to prune')
})

t.test('the outbox survives a reopen and uses WAL', async t => {
  const file = path.join(tempDir(t), 'outbox.db')
  const first = new Outbox(file)
  const d = delivery()
  first.enqueue([d], 7)
  first.close()
  t.notOk(first.open)
  const second = new Outbox(file)
  t.teardown(() => { second.close() })
  t.same(second.due(7, 10, []).map(x => x.body), [d.body])
  const raw = new Database(file, { readonly: true })
  t.equal(raw.pragma('journal_mode', { simple: true }), 'wal')
  raw.close()
})

t.test('an outbox written by a newer version is refused', async t => {
  const file = path.join(tempDir(t), 'outbox.db')
  const raw = new Database(file)
  raw.pragma('user_version = 99')
  raw.close()
  t.throws(() => new Outbox(file), /newer version/)
})
