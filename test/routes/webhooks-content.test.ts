// Content webhooks through the whole app, on both stores (contract §6): each payload carries the
// change's `seq` in the store's change log, the entry's `status` after the change and its
// `previous_status` before it, and a restart on the same data dir goes on with higher seqs.
import path from 'node:path'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { build, eachStore, tempDir, type Env } from '../helper.js'
import { receiver, until, type Receiver } from '../lib/webhooks/receiver.js'

const FAST: Env = { CMS_WEBHOOK_BACKOFF_MS: '1' }
const SCHEMA = { name: 'post', fields: { title: { field_type: 'string', required: true } } }
const CONTENT_KEYS = ['collection', 'environment', 'event', 'id', 'locale', 'previous_status', 'seq', 'slug', 'status', 'timestamp']

async function write (t: Test, app: FastifyInstance, method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object): Promise<void> {
  const res = await app.inject({ method, url: `/api/content/post${url}`, ...(payload === undefined ? {} : { payload }) })
  t.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode}`)
}

/** The content payloads received so far, in seq order. */
function contentPayloads (r: Receiver): Array<Record<string, unknown>> {
  return r.received.map(x => x.body).filter(b => String(b.event).startsWith('content.'))
    .sort((a, b) => (a.seq as number) - (b.seq as number))
}

eachStore(t, async (t, _store, env) => {
  t.test('seq, status and previous_status: create, publish, edit, unpublish, delete', async t => {
    const r = await receiver(t)
    const dataDir = path.join(tempDir(t), 'data')
    const settings = { ...env, ...FAST, CMS_WEBHOOKS: r.url }
    const app = await build(t, settings, { dataDir, keepOpen: true })
    t.equal((await app.inject({ method: 'POST', url: '/api/schemas', payload: SCHEMA })).statusCode, 201)

    await write(t, app, 'POST', '', { _slug: 'p', _status: 'draft', title: 'Draft' })
    await write(t, app, 'PATCH', '/p', { _status: 'published' })
    await write(t, app, 'PUT', '/p', { title: 'Edited' })
    await write(t, app, 'PATCH', '/p', { _status: 'draft' })
    await write(t, app, 'DELETE', '/p')
    await until(() => contentPayloads(r).length === 5, 5000, 'five content payloads')
    const payloads = contentPayloads(r)
    for (const p of payloads) t.same(Object.keys(p).sort(), CONTENT_KEYS, `${String(p.event)}: exactly the contract's fields`)
    t.same(payloads.map(p => [p.event, p.previous_status, p.status]), [
      ['content.created', null, 'draft'],
      ['content.updated', 'draft', 'published'],
      ['content.updated', 'published', 'published'],
      ['content.updated', 'published', 'draft'],
      ['content.deleted', 'draft', null]
    ], 'a publish and an unpublish are updates; a create has no status before it, a delete none after it')
    t.same(payloads.map(p => p.seq), [1, 2, 3, 4, 5], 'one seq per change, in the order of the writes')
    const log = await app.store.changes.since(0, 10, { environment: 'default', locale: null })
    t.same(log.records.map(rec => [rec.seq, rec.slug, rec.op]), [[5, 'p', 'delete']], 'the delete\'s seq is its tombstone\'s')

    // Concurrent writes: each its own seq, the one its entry's record has.
    await Promise.all(['a', 'b', 'c', 'd'].map(async slug => { await write(t, app, 'POST', '', { _slug: slug, title: slug }) }))
    await until(() => contentPayloads(r).length === 9, 5000, 'four more')
    const created = contentPayloads(r).slice(5)
    t.same(created.map(p => p.seq), [6, 7, 8, 9])
    const records = (await app.store.changes.since(5, 10, { environment: 'default', locale: null })).records
    t.same(created.map(p => [p.seq, p.slug]), records.map(rec => [rec.seq, rec.slug]), 'each payload\'s seq is its entry\'s record\'s')
    await app.close()

    // A restart on the same data dir: the log goes on.
    const again = await build(t, settings, { dataDir, keepOpen: true })
    t.teardown(async () => { await again.close() })
    await write(t, again, 'PATCH', '/a', { _status: 'draft' })
    await until(() => contentPayloads(r).length === 10, 5000, 'the payload after the restart')
    t.match(contentPayloads(r)[9], { event: 'content.updated', slug: 'a', seq: 10, previous_status: 'published', status: 'draft' })
  })

  t.test('a refused write sends nothing and takes no seq', async t => {
    const r = await receiver(t)
    const app = await build(t, { ...env, ...FAST, CMS_WEBHOOKS: r.url })
    t.equal((await app.inject({ method: 'POST', url: '/api/schemas', payload: SCHEMA })).statusCode, 201)
    await write(t, app, 'POST', '', { _slug: 'x', title: 'X' })
    t.equal((await app.inject({ method: 'POST', url: '/api/content/post', payload: { _slug: 'x', title: 'Again' } })).statusCode, 409)
    t.equal((await app.inject({ method: 'PUT', url: '/api/content/post/nobody', payload: { title: 'N' } })).statusCode, 404)
    t.equal((await app.inject({ method: 'DELETE', url: '/api/content/post/nobody' })).statusCode, 404)
    await write(t, app, 'DELETE', '/x')
    await until(() => contentPayloads(r).length === 2, 5000, 'two content payloads')
    t.same(contentPayloads(r).map(p => [p.event, p.seq]), [['content.created', 1], ['content.deleted', 2]])
  })
})
