import { createHmac } from 'node:crypto'
import t from 'tap'
import { EVENT_NAMES, buildPayload, deliveryHeaders, signature } from '../../../lib/webhooks/payload.js'
import type { CmsEvent } from '../../../types/events.js'

const id = '3b241101-e2bb-4255-8caf-4136c566a962'
const timestamp = '2025-01-02T03:04:05.678Z'

t.test('every event name of contract §6', async t => {
  t.same([...EVENT_NAMES].sort(), [
    'asset.created', 'asset.deleted', 'content.created', 'content.deleted', 'content.updated',
    'schema.created', 'schema.deleted', 'schema.updated'
  ])
})

t.test('payloads carry exactly the fields of interface.md and contract §6, plus id and timestamp', async t => {
  t.same(buildPayload({ event: 'schema.updated', name: 'post' }, id, timestamp),
    { event: 'schema.updated', name: 'post', id, timestamp })
  t.same(buildPayload({ event: 'content.created', collection: 'post', slug: 'hello', locale: null, environment: 'default', seq: 7, status: 'draft', previous_status: null }, id, timestamp),
    { event: 'content.created', collection: 'post', slug: 'hello', locale: null, environment: 'default', seq: 7, status: 'draft', previous_status: null, id, timestamp })
  // An unpublish (contract §6): an update from published to draft.
  t.same(buildPayload({ event: 'content.updated', collection: 'post', slug: 'hello', locale: 'en', environment: 'staging', seq: 8, status: 'draft', previous_status: 'published' }, id, timestamp),
    { event: 'content.updated', collection: 'post', slug: 'hello', locale: 'en', environment: 'staging', seq: 8, status: 'draft', previous_status: 'published', id, timestamp })
  t.same(buildPayload({ event: 'content.deleted', collection: 'post', slug: 'hello', locale: null, environment: 'default', seq: 9, status: null, previous_status: 'draft' }, id, timestamp),
    { event: 'content.deleted', collection: 'post', slug: 'hello', locale: null, environment: 'default', seq: 9, status: null, previous_status: 'draft', id, timestamp })
  t.same(buildPayload({ event: 'asset.deleted', path: '/api/assets/a.png', environment: 'staging', size: 12, mime: 'image/png' }, id, timestamp),
    { event: 'asset.deleted', path: '/api/assets/a.png', environment: 'staging', size: 12, mime: 'image/png', id, timestamp })
})

t.test('nothing an emitter attaches beyond the contract reaches a receiver', async t => {
  const event = { event: 'content.deleted', collection: 'post', slug: 'x', locale: 'en', environment: 'default', seq: 3, status: null, previous_status: 'published', data: { secret: 1 } } as CmsEvent
  const payload = buildPayload(event, id, timestamp)
  t.same(Object.keys(payload).sort(), ['collection', 'environment', 'event', 'id', 'locale', 'previous_status', 'seq', 'slug', 'status', 'timestamp'])
  t.notMatch(JSON.stringify(payload), /secret/)
})

t.test('the signature is sha256=<hex HMAC-SHA256> of the body bytes', async t => {
  const body = Buffer.from(JSON.stringify({ event: 'schema.created', name: 'ünïcode', id, timestamp }), 'utf8')
  const expected = 'sha256=' + createHmac('sha256', 'shh').update(body).digest('hex')
  t.equal(signature(body, 'shh'), expected)
  t.equal(signature(body.toString('utf8'), 'shh'), expected, 'a string is signed as its UTF-8 bytes')
  t.not(signature(body, 'other'), expected)
  t.match(expected, /^sha256=[0-9a-f]{64}$/)
})

t.test('headers: event and id always; secret and signature only with a secret', async t => {
  const body = Buffer.from('{"a":1}')
  const plain = deliveryHeaders('content.updated', id, body, null)
  t.equal(plain['content-type'], 'application/json')
  t.equal(plain['x-webhook-event'], 'content.updated')
  t.equal(plain['x-webhook-id'], id)
  t.notOk('x-webhook-secret' in plain)
  t.notOk('x-webhook-signature' in plain)
  const signed = deliveryHeaders('content.updated', id, body, 'shh')
  t.equal(signed['x-webhook-secret'], 'shh')
  t.equal(signed['x-webhook-signature'], signature(body, 'shh'))
})
