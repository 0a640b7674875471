// GET /api/webhooks/deliveries and webhook delivery through the whole app: real receivers on
// 127.0.0.1, the outbox under the app's data dir, and a restart on the same data dir.
import path from 'node:path'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { DeliveriesReply, type Delivery } from '../../routes/api/webhooks/deliveries/schemas.js'
import type { CmsEvent } from '../../types/events.js'
import {
  ADMIN_KEY, EDITOR_KEY, KEYS_ENV, VIEWER_KEY, assertError, assertShape, auth, build, tempDir, type Env
} from '../helper.js'
import { closedPortUrl, receiver, until } from '../lib/webhooks/receiver.js'

const FAST: Env = { CMS_WEBHOOK_BACKOFF_MS: '1' }
// Each event its own change (seq): the outbox announces a seq once.
let seq = 0
const contentEvent = (slug: string): CmsEvent => ({ event: 'content.updated', collection: 'post', slug, locale: null, environment: 'default', seq: ++seq, status: 'published', previous_status: 'published' })

async function deliveries (t: Test, app: FastifyInstance, query = '', headers: Record<string, string> = {}): Promise<DeliveriesReply> {
  const res = await app.inject({ method: 'GET', url: `/api/webhooks/deliveries${query}`, headers })
  t.equal(res.statusCode, 200, `GET /api/webhooks/deliveries${query}`)
  const body = res.json<DeliveriesReply>()
  assertShape(t, DeliveriesReply, body)
  return body
}

/** Polls the endpoint until one delivery matches. */
async function waitForDelivery (app: FastifyInstance, match: (d: Delivery) => boolean, what: string): Promise<Delivery> {
  return await until(async () => {
    const res = await app.inject({ method: 'GET', url: '/api/webhooks/deliveries?_per_page=100' })
    return res.json<DeliveriesReply>().items.find(match)
  }, 8000, what)
}

t.test('the endpoint is for the admin role when keys are configured', async t => {
  const r = await receiver(t)
  const app = await build(t, { ...KEYS_ENV, ...FAST, CMS_WEBHOOKS: r.url })
  app.events.emit(contentEvent('a'))
  await until(() => r.received.length === 1, 5000, 'the delivery')

  const none = await app.inject({ method: 'GET', url: '/api/webhooks/deliveries' })
  assertError(t, none, 401, 'UNAUTHORIZED')
  t.equal(none.headers['www-authenticate'], 'Bearer')
  assertError(t, await app.inject({ method: 'GET', url: '/api/webhooks/deliveries', headers: auth('not-a-key-0123456789') }), 401, 'UNAUTHORIZED')
  assertError(t, await app.inject({ method: 'GET', url: '/api/webhooks/deliveries', headers: auth(EDITOR_KEY) }), 403, 'FORBIDDEN')
  assertError(t, await app.inject({ method: 'GET', url: '/api/webhooks/deliveries', headers: { 'x-api-key': VIEWER_KEY } }), 403, 'FORBIDDEN')

  const body = await deliveries(t, app, '', auth(ADMIN_KEY))
  t.equal(body.total, 1)
  t.equal(body.items[0]?.id, r.received[0]?.body.id)
  const viaHeader = await deliveries(t, app, '', { 'x-api-key': ADMIN_KEY })
  t.equal(viaHeader.total, 1, 'X-API-Key works too')
})

t.test('without keys the endpoint is open; without webhooks it is an empty history', async t => {
  const app = await build(t)
  t.same(await deliveries(t, app), { items: [], total: 0, page: 1, per_page: 20, pages: 0, next: null })
})

t.test('the history: newest first, every field, paging and the status filter', async t => {
  const ok = await receiver(t)
  const gone = await receiver(t, () => ({ status: 404 }))
  const app = await build(t, { ...FAST, CMS_WEBHOOKS: `${ok.url},${gone.url}` })
  for (const slug of ['one', 'two', 'three']) app.events.emit(contentEvent(slug))
  await until(async () => (await app.webhooks.deliveries({ page: 1, perPage: 10, status: 'pending' })).total === 0 &&
    (await app.webhooks.deliveries({ page: 1, perPage: 10 })).total === 6, 5000, 'all six finished')

  const all = await deliveries(t, app, '?_per_page=100')
  t.equal(all.total, 6)
  t.same(all.items.map(d => d.url), [gone.url, ok.url, gone.url, ok.url, gone.url, ok.url], 'per event, in URL order')
  const slugs = all.items.map(d => ok.received.concat(gone.received).find(x => x.body.id === d.id)?.body.slug)
  t.same(slugs, ['three', 'three', 'two', 'two', 'one', 'one'], 'newest first')
  for (const d of all.items) {
    t.equal(d.event, 'content.updated')
    t.equal(d.attempts, 1)
    t.equal(d.next_attempt_at, null)
    t.ok(Date.parse(d.updated_at) >= Date.parse(d.created_at))
    if (d.url === ok.url) t.match(d, { status: 'delivered', last_status: 200, last_error: null })
    else t.match(d, { status: 'failed', last_status: 404, last_error: 'HTTP 404' }, 'a 404 is final')
  }
  t.equal(gone.received.length, 3, 'no 404 was retried')

  const page2 = await deliveries(t, app, '?_page=2&_per_page=4')
  t.same([page2.page, page2.per_page, page2.total, page2.pages], [2, 4, 6, 2])
  t.same(page2.items.map(d => d.id), all.items.slice(4).map(d => d.id))
  const failed = await deliveries(t, app, '?status=failed')
  t.same([failed.total, failed.items.every(d => d.status === 'failed')], [3, true])
  t.equal((await deliveries(t, app, '?status=pending')).total, 0)

  assertError(t, await app.inject({ method: 'GET', url: '/api/webhooks/deliveries?status=lost' }), 400, 'BAD_REQUEST')
  assertError(t, await app.inject({ method: 'GET', url: '/api/webhooks/deliveries?_per_page=0' }), 400, 'BAD_REQUEST')
  assertError(t, await app.inject({ method: 'GET', url: '/api/webhooks/deliveries?_per_page=1001' }), 400, 'BAD_REQUEST')
  assertError(t, await app.inject({ method: 'GET', url: '/api/webhooks/deliveries?_page=0' }), 400, 'BAD_REQUEST')
})

t.test('500 twice then 200: the receiver gets the same id three times', async t => {
  const r = await receiver(t, (_req, i) => ({ status: i < 2 ? 500 : 200 }))
  const app = await build(t, { ...FAST, CMS_WEBHOOKS: r.url })
  app.events.emit({ event: 'asset.created', path: '/api/assets/a.png', environment: 'default', size: 3, mime: 'image/png' })
  const d = await waitForDelivery(app, d => d.status === 'delivered', 'delivered')
  t.equal(r.received.length, 3)
  t.same(r.received.map(x => x.body.id), [d.id, d.id, d.id])
  t.match(d, { attempts: 3, last_status: 200, last_error: null })
})

t.test('a closed port is retried, then shows as failed in the history', async t => {
  const url = await closedPortUrl()
  const app = await build(t, { ...FAST, CMS_WEBHOOKS: url })
  app.events.emit(contentEvent('x'))
  const d = await waitForDelivery(app, d => d.status === 'failed', 'failed')
  t.equal(d.attempts, 10)
  t.equal(d.last_status, null)
  t.match(d.last_error, /ECONNREFUSED/)
  t.match(d.last_error, /gave up after 10 attempts/)
})

t.test('Retry-After on a 503 is honoured and visible as the next attempt time', async t => {
  const r = await receiver(t, (_req, i) => i === 0 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 })
  const app = await build(t, { ...FAST, CMS_WEBHOOKS: r.url })
  app.events.emit(contentEvent('later'))
  const pending = await waitForDelivery(app, d => d.attempts === 1, 'the first attempt')
  t.match(pending, { status: 'pending', last_status: 503, last_error: 'HTTP 503' })
  t.ok(pending.next_attempt_at !== null && Date.parse(pending.next_attempt_at) - Date.parse(pending.updated_at) >= 990,
    'next attempt a second later')
  await waitForDelivery(app, d => d.status === 'delivered', 'delivered')
  const gap = r.received[1]!.at - r.received[0]!.at
  t.ok(gap >= 950, `the retry came ${gap} ms later`)
})

t.test('a delivery pending when the server stops is delivered after a restart on the same data dir', async t => {
  // The first run's receiver asks for a second's patience; the server stops meanwhile.
  const r = await receiver(t, () => ({ status: 503, headers: { 'retry-after': '1' } }))
  const dataDir = path.join(tempDir(t), 'data')
  const env = { ...FAST, CMS_WEBHOOKS: r.url }
  const first = await build(t, env, { dataDir, keepOpen: true })
  first.events.emit({ event: 'schema.deleted', name: 'post' })
  const pending = await waitForDelivery(first, d => d.attempts === 1, 'the first attempt')
  t.equal(pending.status, 'pending')
  const stopping = Date.now()
  await first.close()
  t.ok(Date.now() - stopping < 1000, 'nothing in flight: the shutdown is quick')

  r.answer(() => ({ status: 200 }))
  const second = await build(t, env, { dataDir, keepOpen: true })
  t.teardown(async () => { await second.close() })
  const d = await waitForDelivery(second, d => d.status === 'delivered', 'delivered after the restart')
  t.equal(d.id, pending.id)
  t.equal(d.attempts, 2, 'the count of attempts survives the restart')
  t.equal(r.received.length, 2)
  t.same(r.received.map(x => x.headers['x-webhook-id']), [d.id, d.id], 'the same id across the restart')
  t.ok(r.received[1]!.raw.equals(r.received[0]!.raw), 'the same bytes')
  t.ok(r.received[1]!.at - r.received[0]!.at >= 950, 'the Retry-After schedule survived the restart')
  t.same({ event: r.received[1]!.body.event, name: r.received[1]!.body.name }, { event: 'schema.deleted', name: 'post' })
})

t.test('schema events: created, updated and deleted, with a slow receiver that never delays a reply', async t => {
  const r = await receiver(t, () => ({ status: 200, delayMs: 3000 }))
  const app = await build(t, { ...FAST, CMS_WEBHOOKS: r.url })
  const schema = { name: 'hooked', fields: { title: { field_type: 'string' } } }
  const calls = [
    { method: 'POST' as const, url: '/api/schemas', payload: schema, status: 201 },
    { method: 'PUT' as const, url: '/api/schemas/hooked', payload: { ...schema, description: 'changed' }, status: 200 },
    { method: 'DELETE' as const, url: '/api/schemas/hooked', payload: undefined, status: 204 }
  ]
  for (const [i, call] of calls.entries()) {
    const started = Date.now()
    const res = await app.inject({ method: call.method, url: call.url, ...(call.payload === undefined ? {} : { payload: call.payload }) })
    const took = Date.now() - started
    t.equal(res.statusCode, call.status, `${call.method} ${call.url}`)
    t.ok(took < 1500, `${call.method} replied in ${took} ms while the receiver takes 3 s`)
    t.equal((await app.webhooks.deliveries({ page: 1, perPage: 1 })).total, i + 1, 'in the outbox by the time the reply arrived')
  }
  await until(() => r.received.length === 3, 5000, 'three schema events')
  t.same(r.received.map(x => [x.body.event, x.body.name]).sort(),
    [['schema.created', 'hooked'], ['schema.deleted', 'hooked'], ['schema.updated', 'hooked']])
  for (const x of r.received) t.same(Object.keys(x.body).sort(), ['event', 'id', 'name', 'timestamp'])
  // Not waiting 3 s for the answers: the attempts in flight fail and stay pending at shutdown.
  await r.close()
})
