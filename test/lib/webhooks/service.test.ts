import { existsSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { Outbox } from '../../../lib/webhooks/outbox.js'
import { signature } from '../../../lib/webhooks/payload.js'
import { WebhookService, displayUrl, type DeliveryView, type WebhookServiceOptions } from '../../../lib/webhooks/service.js'
import type { CmsEvent } from '../../../types/events.js'
import { tempDir } from '../../helper.js'
import { closedPortUrl, receiver, until } from './receiver.js'

const created: CmsEvent = { event: 'content.created', collection: 'post', slug: 'hello', locale: null, environment: 'default', seq: 1, status: 'published', previous_status: null }

function service (t: Test, options: Partial<WebhookServiceOptions> & { urls: string[] }, start = true): WebhookService {
  const s = new WebhookService({
    secret: null,
    backoffMs: 1,
    outboxFile: path.join(tempDir(t), 'outbox.db'),
    ...options
  })
  t.teardown(async () => { await s.close() })
  if (start) void s.start()
  return s
}

const only = async (s: WebhookService): Promise<DeliveryView | undefined> =>
  (await s.deliveries({ page: 1, perPage: 10 })).items[0]

t.test('one delivery per URL, each with its own id, the stored bytes and the signature', async t => {
  const a = await receiver(t)
  const b = await receiver(t)
  const s = service(t, { urls: [a.url, b.url], secret: 'top-secret' })
  s.record(created)
  await until(() => a.received.length === 1 && b.received.length === 1, 5000, 'both receivers')
  const [ra, rb] = [a.received[0]!, b.received[0]!]
  t.not(ra.body.id, rb.body.id, 'a delivery id per URL')
  t.equal(ra.body.timestamp, rb.body.timestamp, 'the same event time')
  for (const r of [ra, rb]) {
    t.equal(r.headers['x-webhook-id'], r.body.id)
    t.equal(r.headers['x-webhook-event'], 'content.created')
    t.equal(r.headers['x-webhook-secret'], 'top-secret')
    t.equal(r.headers['x-webhook-signature'], signature(r.raw, 'top-secret'), 'signed over the raw body')
    t.equal(r.headers['content-type'], 'application/json')
    t.equal(r.headers['content-length'], String(r.raw.length))
  }
  await until(async () => (await s.deliveries({ page: 1, perPage: 10, status: 'delivered' })).total === 2, 5000, 'both delivered')
})

t.test('500, 500, then 200: the same id and the same bytes three times', async t => {
  const r = await receiver(t, (_req, i) => ({ status: i < 2 ? 500 : 200 }))
  const s = service(t, { urls: [r.url] })
  s.record(created)
  await until(async () => (await only(s))?.status === 'delivered', 5000, 'delivered')
  t.equal(r.received.length, 3)
  t.same(new Set(r.received.map(x => x.headers['x-webhook-id'])).size, 1)
  t.ok(r.received.every(x => x.raw.equals(r.received[0]!.raw)), 'identical bytes on every attempt')
  t.match(await only(s), { attempts: 3, last_status: 200, last_error: null, next_attempt_at: null })
})

t.test('a closed port is retried, then failed after the last attempt', async t => {
  const url = await closedPortUrl()
  const s = service(t, { urls: [url], maxAttempts: 3 })
  s.record(created)
  const d = await until(async () => { const d = await only(s); return d?.status === 'failed' ? d : undefined }, 5000, 'failed')
  t.equal(d.attempts, 3)
  t.equal(d.last_status, null)
  t.match(d.last_error, /ECONNREFUSED.*gave up after 3 attempts/)
})

t.test('an attempt is cut off at the timeout and retried', async t => {
  const r = await receiver(t, (_req, i) => i === 0 ? { hang: true } : { status: 204 })
  const s = service(t, { urls: [r.url], timeoutMs: 200 })
  s.record(created)
  await until(async () => (await only(s))?.status === 'delivered', 5000, 'delivered on the second attempt')
  t.equal(r.received.length, 2)
  t.match(await only(s), { attempts: 2, last_status: 204 })

  const hang = await receiver(t, () => ({ hang: true }))
  const s2 = service(t, { urls: [hang.url], timeoutMs: 150, maxAttempts: 2 })
  s2.record(created)
  const d = await until(async () => { const d = await only(s2); return d?.status === 'failed' ? d : undefined }, 5000, 'failed')
  t.match(d.last_error, /^timed out after 150 ms/)
})

t.test('a 4xx other than 429 is not retried', async t => {
  const r = await receiver(t, () => ({ status: 410 }))
  const s = service(t, { urls: [r.url] })
  s.record(created)
  const d = await until(async () => { const d = await only(s); return d?.status === 'failed' ? d : undefined }, 5000, 'failed')
  t.match(d, { attempts: 1, last_status: 410, last_error: 'HTTP 410', next_attempt_at: null })
  t.equal(r.received.length, 1)
})

t.test('Retry-After on a 429 is honoured over a shorter back-off', async t => {
  const r = await receiver(t, (_req, i) => i === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 })
  const s = service(t, { urls: [r.url] })
  s.record(created)
  await until(async () => { const d = await only(s); return d?.status === 'pending' && d.attempts === 1 }, 5000, 'the first answer')
  t.match(await only(s), { last_status: 429, last_error: 'HTTP 429' })
  await until(async () => (await only(s))?.status === 'delivered', 5000, 'delivered')
  const gap = r.received[1]!.at - r.received[0]!.at
  t.ok(gap >= 950, `waited ${gap} ms for Retry-After: 1 (back-off base 1 ms)`)
})

t.test('a retry is due exactly its delay after the attempt was recorded, however the clock moves meanwhile', async t => {
  const r = await receiver(t, () => ({ status: 503, headers: { 'retry-after': '1' } }))
  // A clock that moves 7 ms at every reading: two readings for one record would show.
  let readings = 0
  const s = service(t, { urls: [r.url], now: () => Date.now() + 7 * readings++ })
  s.record(created)
  await until(async () => (await only(s))?.attempts === 1, 5000, 'the first answer')
  const d = await only(s)
  t.match(d, { status: 'pending', last_status: 503 })
  t.equal(Date.parse(d?.next_attempt_at ?? '') - Date.parse(d?.updated_at ?? ''), 1000)
})

t.test('a flood of events: bounded attempts in flight, every one delivered', async t => {
  let open = 0
  let peak = 0
  const r = await receiver(t, () => {
    open++
    peak = Math.max(peak, open)
    setTimeout(() => { open-- }, 20)
    return { status: 200, delayMs: 20 }
  })
  const s = service(t, { urls: [r.url], concurrency: 3 })
  for (let i = 0; i < 60; i++) void s.record({ ...created, slug: `e-${i}`, seq: i + 1 })
  t.ok(s.inFlightCount <= 3)
  await until(async () => (await s.deliveries({ page: 1, perPage: 1, status: 'delivered' })).total === 60, 10_000, 'all delivered')
  t.ok(peak <= 3, `at most 3 at once (peak ${peak})`)
  t.same(new Set(r.received.map(x => x.body.slug)).size, 60)
})

t.test('close waits for an attempt that finishes within the grace period', async t => {
  const r = await receiver(t, () => ({ status: 200, delayMs: 150 }))
  const file = path.join(tempDir(t), 'outbox.db')
  const s = service(t, { urls: [r.url], outboxFile: file, graceMs: 2000 })
  s.record(created)
  await until(() => r.received.length === 1, 5000, 'the attempt')
  await s.close()
  const outbox = new Outbox(file)
  t.teardown(() => { outbox.close() })
  t.match(outbox.list(null, 10, { offset: 0 }).items[0], { status: 'delivered', attempts: 1 })
})

t.test('close leaves an attempt still in flight pending; the next start delivers it with the same id', async t => {
  const r = await receiver(t, () => ({ hang: true }))
  const file = path.join(tempDir(t), 'outbox.db')
  const first = service(t, { urls: [r.url], outboxFile: file, graceMs: 200 })
  first.record(created)
  await until(() => r.received.length === 1, 5000, 'the first attempt')
  const started = Date.now()
  await first.close()
  t.ok(Date.now() - started < 1500, 'close does not wait beyond the grace period')
  t.throws(() => { first.record(created) }, /closed/, 'a closed service records nothing')

  r.answer(() => ({ status: 200 }))
  const second = service(t, { urls: [r.url], outboxFile: file })
  await until(async () => (await only(second))?.status === 'delivered', 5000, 'delivered after the restart')
  t.equal(r.received.length, 2)
  t.equal(r.received[1]!.headers['x-webhook-id'], r.received[0]!.headers['x-webhook-id'])
  t.ok(r.received[1]!.raw.equals(r.received[0]!.raw))
  t.match(await only(second), { attempts: 1 }, 'the interrupted attempt was not counted')
})

t.test('pending deliveries to a URL no longer configured are failed at start, not sent', async t => {
  const r = await receiver(t)
  const file = path.join(tempDir(t), 'outbox.db')
  const first = service(t, { urls: [r.url, 'http://127.0.0.1:9/gone'], outboxFile: file }, false)
  first.record(created)
  await first.close()
  const second = service(t, { urls: [r.url], outboxFile: file })
  await until(async () => (await second.deliveries({ page: 1, perPage: 10, status: 'delivered' })).total === 1, 5000, 'delivered')
  t.match((await second.deliveries({ page: 1, perPage: 10, status: 'failed' })).items, [
    { url: 'http://127.0.0.1:9/gone', attempts: 0, last_error: 'webhook URL no longer configured' }
  ])
})

t.test('credentials in a URL are sent as Basic auth and masked in the history', async t => {
  const r = await receiver(t)
  const url = r.url.replace('http://', 'http://hook-user:p%40ss@')
  const s = service(t, { urls: [url] })
  s.record(created)
  await until(async () => (await only(s))?.status === 'delivered', 5000, 'delivered')
  t.equal(r.received[0]!.headers.authorization, `Basic ${Buffer.from('hook-user:p@ss').toString('base64')}`)
  t.equal((await only(s))?.url, r.url.replace('http://', 'http://***:***@'))
  t.equal(displayUrl('https://example.com/x?y=1'), 'https://example.com/x?y=1')
})

t.test('the last error never carries what the receiver answered', async t => {
  const r = await receiver(t, () => ({ status: 400, headers: { 'x-echo': 'top-secret' } }))
  const s = service(t, { urls: [r.url], secret: 'top-secret' })
  s.record(created)
  const d = await until(async () => { const d = await only(s); return d?.status === 'failed' ? d : undefined }, 5000, 'failed')
  t.equal(d.last_error, 'HTTP 400')
})

t.test('without URLs nothing is opened or recorded', async t => {
  const dir = tempDir(t)
  const s = new WebhookService({ urls: [], secret: null, backoffMs: 1, outboxFile: path.join(dir, 'outbox.db') })
  t.notOk(s.enabled)
  s.start()
  s.record(created)
  t.same((await s.deliveries({ page: 2, perPage: 5 })), { items: [], total: 0, page: 2, per_page: 5, pages: 0, next: null })
  await s.close()
  t.notOk(existsSync(path.join(dir, 'outbox.db')))
})

t.test('a URL listed twice is notified once per event', async t => {
  const r = await receiver(t)
  const s = service(t, { urls: [r.url, r.url] })
  s.record(created)
  await until(async () => (await only(s))?.status === 'delivered', 5000, 'delivered')
  t.equal((await s.deliveries({ page: 1, perPage: 10 })).total, 1)
  t.equal(r.received.length, 1)
})
