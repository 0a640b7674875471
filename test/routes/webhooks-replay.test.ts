// Changes a crash left stored but never recorded in the outbox are announced at the next start
// (issue 28 item 9), on both stores. The crash between a content write and its outbox record is
// simulated by writing through the store alone (as the content service does, minus the event);
// the next start must record one event per such change, with the change's seq, and none twice.
import path from 'node:path'
import Database from '../../lib/sqlite-driver.js'
import pg from 'pg'
import t from 'tap'
import { OUTBOX_FILE } from '../../plugins/webhooks.js'
import type { ContentEvent } from '../../types/events.js'
import { build, eachStore, tempDir } from '../helper.js'
import { closedPortUrl } from '../lib/webhooks/receiver.js'

const SCOPE = { environment: 'default', locale: null }

type Payload = Pick<ContentEvent, 'event' | 'slug' | 'seq' | 'status' | 'previous_status'>

interface Outboxed { payloads: Payload[], floor: number | undefined, kept: number }

const toPayload = ({ event, slug, seq, status, previous_status: previous }: ContentEvent): Payload => ({ event, slug, seq, status, previous_status: previous })

/** What the outbox holds: the data dir's file, or with PostgreSQL the tables in the database (`url`). */
async function outbox (dataDir: string, url?: string | null): Promise<Outboxed> {
  if (url !== undefined && url !== null) return await sharedOutbox(url)
  const db = new Database(path.join(dataDir, OUTBOX_FILE), { readonly: true })
  try {
    const payloads = (db.prepare("SELECT body FROM deliveries WHERE event LIKE 'content.%' ORDER BY seq").pluck().all() as string[])
      .map(body => toPayload(JSON.parse(body) as ContentEvent))
    const floor = db.prepare("SELECT value FROM marks WHERE name = 'announced_floor'").pluck().get() as number | undefined
    const kept = db.prepare('SELECT COUNT(*) FROM announced').pluck().get() as number
    return { payloads, floor, kept }
  } finally {
    db.close()
  }
}

async function sharedOutbox (url: string): Promise<Outboxed> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const bodies = await client.query<{ body: string }>("SELECT body FROM webhook_deliveries WHERE event LIKE 'content.%' ORDER BY seq")
    const floor = await client.query<{ value: number }>("SELECT value::float8 AS value FROM webhook_marks WHERE name = 'announced_floor'")
    const kept = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_announced')
    return { payloads: bodies.rows.map(r => toPayload(JSON.parse(r.body) as ContentEvent)), floor: floor.rows[0]?.value, kept: kept.rows[0]?.n ?? 0 }
  } finally {
    await client.end()
  }
}

eachStore(t, async (t, store, env) => {
  const hooks = { ...env, CMS_WEBHOOKS: await closedPortUrl(), CMS_WEBHOOK_BACKOFF_MS: '3600000' }

  t.test('a restart announces each stored change the outbox never recorded, once', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    const first = await build(t, hooks, { dataDir, keepOpen: true })
    t.equal((await first.inject({ method: 'POST', url: '/api/schemas', payload: { name: 'post', fields: { title: { field_type: 'string' } } } })).statusCode, 201)
    for (const slug of ['a', 'b', 'd']) {
      t.equal((await first.inject({ method: 'POST', url: '/api/content/post', payload: { _slug: slug, _status: 'published', title: slug } })).statusCode, 201)
    }
    // The crash: these commit in the store, and their events are never recorded.
    const created = await first.store.create(SCOPE, 'post', { slug: 'c', status: 'draft', data: { title: 'c' }, unique: [] })
    const updated = await first.store.update(SCOPE, 'post', { slug: 'a', status: 'draft', data: { title: 'a2' }, unique: [] })
    const deleted = await first.store.delete(SCOPE, 'post', 'b')
    await first.close()
    const before = (await outbox(dataDir, first.config.databaseUrl)).payloads
    t.strictSame(before.map(p => p.slug), ['a', 'b', 'd'], `${store}: only the acknowledged writes were recorded`)

    await (await build(t, hooks, { dataDir, keepOpen: true })).close()
    const after = (await outbox(dataDir, first.config.databaseUrl))
    t.strictSame(after.payloads.slice(0, 3), before, 'the recorded events stay as they were')
    t.strictSame(after.payloads.slice(3), [
      { event: 'content.created', slug: 'c', seq: created.seq, status: 'draft', previous_status: null },
      { event: 'content.updated', slug: 'a', seq: updated.seq, status: 'draft', previous_status: null },
      { event: 'content.deleted', slug: 'b', seq: deleted, status: null, previous_status: null }
    ], 'each unrecorded change is announced with its seq, as the log holds it')
    t.equal(after.floor, deleted, 'the floor moved past every change of the log')
    t.equal(after.kept, 0, 'and the seqs it covers are forgotten')

    const third = await build(t, hooks, { dataDir })
    t.equal((await third.inject({ method: 'PATCH', url: '/api/content/post/d', payload: { title: 'd2' } })).statusCode, 200)
    t.strictSame((await outbox(dataDir, first.config.databaseUrl)).payloads.slice(6).map(p => [p.event, p.slug]), [['content.updated', 'd']], 'a clean restart announces nothing again')
    t.equal((await outbox(dataDir, first.config.databaseUrl)).kept, 1, 'a recorded change is noted above the floor')
  })

  t.test('an outbox started on existing content does not announce the past', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    const first = await build(t, env, { dataDir, keepOpen: true })
    t.equal((await first.inject({ method: 'POST', url: '/api/schemas', payload: { name: 'post', fields: { title: { field_type: 'string' } } } })).statusCode, 201)
    t.equal((await first.inject({ method: 'POST', url: '/api/content/post', payload: { _slug: 'old', title: 'old' } })).statusCode, 201)
    await first.close()
    await (await build(t, hooks, { dataDir, keepOpen: true })).close()
    const { payloads, floor } = (await outbox(dataDir, first.config.databaseUrl))
    t.strictSame(payloads, [], 'no event for what was written before webhooks were configured')
    t.ok(floor !== undefined && floor > 0, 'the floor starts at the latest seq')
  })
})
