// The webhooks plugin alone on a bare instance: config, events and webhooks, plus a route that
// emits the way the real routes do (before replying).
import { createHmac, timingSafeEqual } from 'node:crypto'
import { existsSync } from 'node:fs'
import path from 'node:path'
import Database from '../../lib/sqlite-driver.js'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { request } from 'undici'
import clusterPlugin from '../../plugins/cluster.js'
import configPlugin from '../../plugins/config.js'
import dataPlugin from '../../plugins/data.js'
import eventsPlugin from '../../plugins/events.js'
import storePlugin from '../../plugins/store.js'
import webhooksPlugin, { OUTBOX_FILE } from '../../plugins/webhooks.js'
import type { CmsEvent } from '../../types/events.js'
import { tempDir, testConfig, type Env } from '../helper.js'
import { closedPortUrl, receiver, until, type Received } from '../lib/webhooks/receiver.js'

const EVENTS: CmsEvent[] = [
  { event: 'schema.created', name: 'post' },
  { event: 'schema.updated', name: 'post' },
  { event: 'schema.deleted', name: 'post' },
  { event: 'content.created', collection: 'post', slug: 'hello', locale: null, environment: 'default', seq: 1, status: 'draft', previous_status: null },
  { event: 'content.updated', collection: 'post', slug: 'hello', locale: 'en', environment: 'staging', seq: 2, status: 'draft', previous_status: 'published' },
  { event: 'content.deleted', collection: 'post', slug: 'hello', locale: 'de', environment: 'default', seq: 3, status: null, previous_status: 'published' },
  { event: 'asset.created', path: '/api/assets/img/a.png', environment: 'default', size: 1234, mime: 'image/png' },
  { event: 'asset.deleted', path: '/api/assets/doc.pdf', environment: 'staging', size: 99, mime: 'application/pdf' }
]

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

interface Built { app: FastifyInstance, dataDir: string }

async function bare (t: Test, env: Env): Promise<Built> {
  const dataDir = path.join(tempDir(t), 'data')
  const app = Fastify()
  await app.register(configPlugin, { config: testConfig(dataDir, { CMS_WEBHOOK_BACKOFF_MS: '5', ...env }) })
  await app.register(dataPlugin)
  await app.register(eventsPlugin)
  // The store's change log: a start announces the changes the outbox never recorded.
  await app.register(clusterPlugin)
  await app.register(storePlugin)
  await app.register(webhooksPlugin)
  // A write route as the real ones are: emit, then reply. Each its own change (seq): a seq is announced once.
  let seq = 0
  app.post('/emit', async () => {
    app.events.emit({ event: 'content.created', collection: 'post', slug: 'x', locale: null, environment: 'default', seq: ++seq, status: 'published', previous_status: null })
    return { ok: true }
  })
  await app.ready()
  t.teardown(async () => { await app.close() })
  return { app, dataDir }
}

/** What a receiver does with the shared secret: HMAC of the raw body, compared in constant time. */
function verify (received: Received, secret: string): boolean {
  const expected = Buffer.from('sha256=' + createHmac('sha256', secret).update(received.raw).digest('hex'))
  const given = Buffer.from(String(received.headers['x-webhook-signature'] ?? ''))
  return given.length === expected.length && timingSafeEqual(given, expected)
}

t.test('every event reaches the receiver with its payload, id, timestamp and headers', async t => {
  const r = await receiver(t)
  const { app } = await bare(t, { CMS_WEBHOOKS: r.url })
  const before = Date.now()
  for (const e of EVENTS) app.events.emit(e)
  await until(() => r.received.length === EVENTS.length, 5000, 'every event')
  for (const e of EVENTS) {
    const got = r.received.find(x => x.body.event === e.event)
    if (got === undefined) { t.fail(`${e.event} missing`); continue }
    const { id, timestamp, ...rest } = got.body
    t.same(rest, e, `${e.event}: the fields of the event`)
    t.match(id, UUID, `${e.event}: id is a UUID`)
    t.equal(got.headers['x-webhook-id'], id)
    t.equal(got.headers['x-webhook-event'], e.event)
    t.equal(got.headers['content-type'], 'application/json')
    t.notOk('x-webhook-secret' in got.headers, 'no secret configured, no secret header')
    t.notOk('x-webhook-signature' in got.headers)
    const at = Date.parse(String(timestamp))
    t.ok(new Date(at).toISOString() === timestamp && at >= before - 1 && at <= Date.now(), `${e.event}: timestamp is ISO, when it happened`)
  }
  t.equal(new Set(r.received.map(x => x.body.id)).size, EVENTS.length, 'a distinct id per delivery')
})

t.test('with a secret: X-Webhook-Secret and a signature a receiver can verify over the raw body', async t => {
  const secret = 'correct horse battery staple'
  const r = await receiver(t)
  const { app } = await bare(t, { CMS_WEBHOOKS: r.url, CMS_WEBHOOK_SECRET: secret })
  app.events.emit({ event: 'schema.created', name: 'ünïcödé_name' })
  await until(() => r.received.length === 1, 5000, 'the delivery')
  const got = r.received[0]!
  t.equal(got.headers['x-webhook-secret'], secret)
  t.ok(verify(got, secret), 'the signature verifies')
  t.notOk(verify(got, 'another secret'), 'not with another secret')
  t.notOk(verify({ ...got, raw: Buffer.from(JSON.stringify(got.body, null, 1)) }, secret), 'not over other bytes')
})

t.test('the delivery is in the outbox before the reply is sent', async t => {
  const r = await receiver(t, () => ({ hang: true }))
  const dataDir = path.join(tempDir(t), 'data')
  const app = Fastify()
  await app.register(configPlugin, { config: testConfig(dataDir, { CMS_WEBHOOKS: r.url }) })
  await app.register(dataPlugin)
  await app.register(eventsPlugin)
  await app.register(clusterPlugin)
  await app.register(storePlugin)
  await app.register(webhooksPlugin)
  let seen = -1
  app.post('/emit', async () => {
    app.events.emit({ event: 'content.deleted', collection: 'post', slug: 'x', locale: null, environment: 'default', seq: 2, status: null, previous_status: 'published' })
    // Another connection, as after a crash: the row is committed already.
    const db = new Database(path.join(dataDir, OUTBOX_FILE), { readonly: true })
    seen = (db.prepare("SELECT COUNT(*) AS n FROM deliveries WHERE event = 'content.deleted'").get() as { n: number }).n
    db.close()
    return { ok: true }
  })
  await app.ready()
  t.teardown(async () => { await app.close() })
  const res = await app.inject({ method: 'POST', url: '/emit' })
  t.equal(res.statusCode, 200)
  t.equal(seen, 1, 'committed inside emit')
})

t.test('a receiver that takes 3 s does not delay the reply; a dead one does not fail it', async t => {
  const slow = await receiver(t, () => ({ status: 200, delayMs: 3000 }))
  const dead = await closedPortUrl()
  const { app } = await bare(t, { CMS_WEBHOOKS: `${slow.url},${dead}` })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  for (let i = 0; i < 3; i++) {
    const started = Date.now()
    const res = await request(`http://127.0.0.1:${port}/emit`, { method: 'POST' })
    const body = await res.body.json()
    const took = Date.now() - started
    t.equal(res.statusCode, 200)
    t.same(body, { ok: true })
    // The receiver takes 3 s: a reply well under that did not wait for it (loose, for a busy CI box).
    t.ok(took < 1500, `reply ${i + 1} in ${took} ms`)
  }
  await until(() => slow.received.length === 3, 5000, 'the slow receiver got all three')
  await until(async () => (await app.webhooks.deliveries({ page: 1, perPage: 10, status: 'delivered' })).total === 3, 6000, 'slow ones delivered')
  const failing = (await app.webhooks.deliveries({ page: 1, perPage: 10 })).items.filter(d => d.url === dead)
  t.equal(failing.length, 3)
  // The rows go into the message: a failure on a loaded CI box then says what was seen.
  t.ok(failing.every(d => d.status !== 'delivered' && d.attempts >= 2 && /ECONNREFUSED/.test(d.last_error ?? '')),
    `the dead receiver is being retried: ${JSON.stringify(failing.map(d => ({ status: d.status, attempts: d.attempts, last_error: d.last_error })))}`)
})

t.test('without webhooks the listener does nothing and no outbox is opened', async t => {
  const { app, dataDir } = await bare(t, {})
  t.notOk(app.webhooks.enabled)
  const res = await app.inject({ method: 'POST', url: '/emit' })
  t.equal(res.statusCode, 200)
  t.same((await app.webhooks.deliveries({ page: 1, perPage: 20 })).items, [])
  t.notOk(existsSync(path.join(dataDir, OUTBOX_FILE)))
})

t.test('the outbox and its agent are closed with the app', async t => {
  const r = await receiver(t)
  const dataDir = path.join(tempDir(t), 'data')
  const app = Fastify()
  await app.register(configPlugin, { config: testConfig(dataDir, { CMS_WEBHOOKS: r.url }) })
  await app.register(dataPlugin)
  await app.register(eventsPlugin)
  await app.register(clusterPlugin)
  await app.register(storePlugin)
  await app.register(webhooksPlugin)
  await app.ready()
  app.events.emit(EVENTS[0]!)
  await until(async () => (await app.webhooks.deliveries({ page: 1, perPage: 1 })).items[0]?.status === 'delivered', 5000, 'delivered')
  await app.close()
  t.same((await app.webhooks.deliveries({ page: 1, perPage: 1 })).total, 0, 'closed: no history is read')
  // The file is released: another connection can take an exclusive lock at once.
  const db = new Database(path.join(dataDir, OUTBOX_FILE))
  db.pragma('locking_mode = EXCLUSIVE')
  t.doesNotThrow(() => db.exec('BEGIN EXCLUSIVE; COMMIT'))
  db.close()
})
