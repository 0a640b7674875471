import t from 'tap'
import { Agent } from 'undici'
import { attemptDelivery, describeError, splitCredentials, type AttemptInput } from '../../../lib/webhooks/send.js'
import { closedPortUrl, receiver } from './receiver.js'

const agent = new Agent()
t.teardown(async () => { await agent.destroy() })

const input = (url: string): AttemptInput => ({ id: 'd-1', event: 'schema.created', url, body: '{"event":"schema.created","name":"é"}' })

t.test('a 2xx is delivered; the body and headers are as stored', async t => {
  const r = await receiver(t, () => ({ status: 202 }))
  t.same(await attemptDelivery(input(r.url), { dispatcher: agent, secret: null, timeoutMs: 1000 }), { kind: 'delivered', status: 202 })
  t.equal(r.received[0]!.raw.toString('utf8'), input(r.url).body)
  t.equal(r.received[0]!.headers['x-webhook-id'], 'd-1')
})

t.test('a 503 with Retry-After is retried after that time', async t => {
  const r = await receiver(t, () => ({ status: 503, headers: { 'retry-after': '2' } }))
  t.same(await attemptDelivery(input(r.url), { dispatcher: agent, secret: null, timeoutMs: 1000 }),
    { kind: 'retry', status: 503, error: 'HTTP 503', retryAfterMs: 2000 })
})

t.test('a refused connection and a timeout are retryable errors', async t => {
  const refused = await attemptDelivery(input(await closedPortUrl()), { dispatcher: agent, secret: null, timeoutMs: 1000 })
  t.match(refused, { kind: 'retry', status: null, error: /ECONNREFUSED/, retryAfterMs: null })
  const r = await receiver(t, () => ({ hang: true }))
  const started = Date.now()
  const slow = await attemptDelivery(input(r.url), { dispatcher: agent, secret: null, timeoutMs: 100 })
  t.same(slow, { kind: 'retry', status: null, error: 'timed out after 100 ms', retryAfterMs: null })
  t.ok(Date.now() - started < 1000, 'cut off at the time limit')
})

t.test('a slow body counts against the same time limit', async t => {
  const http = await import('node:http')
  const server = http.createServer((_req, res) => {
    res.writeHead(200)
    res.write('partial')
    // Never ends the body.
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const { port } = server.address() as { port: number }
  const out = await attemptDelivery(input(`http://127.0.0.1:${port}/`), { dispatcher: agent, secret: null, timeoutMs: 150 })
  t.same(out, { kind: 'retry', status: null, error: 'timed out after 150 ms', retryAfterMs: null })
})

t.test('shutdown aborts an attempt in flight', async t => {
  const r = await receiver(t, () => ({ hang: true }))
  const shutdown = new AbortController()
  const pending = attemptDelivery(input(r.url), { dispatcher: agent, secret: null, timeoutMs: 5000, signal: shutdown.signal })
  setTimeout(() => { shutdown.abort() }, 50)
  const started = Date.now()
  t.match(await pending, { kind: 'retry', status: null })
  t.ok(Date.now() - started < 2000)
})

t.test('credentials in the URL become Basic authentication', async t => {
  t.same(splitCredentials('http://a.test/x'), { url: 'http://a.test/x', authorization: null })
  t.same(splitCredentials('https://us%20er:p%3Ass@a.test/x?q=1'),
    { url: 'https://a.test/x?q=1', authorization: `Basic ${Buffer.from('us er:p:ss').toString('base64')}` })
})

t.test('errors are described briefly, without a stack', async t => {
  t.equal(describeError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), false, 5000),
    'connect ECONNREFUSED 127.0.0.1:1')
  t.equal(describeError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), false, 5000), 'ECONNRESET: socket hang up')
  t.equal(describeError(Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' }), false, 5000), 'timed out after 5000 ms')
  t.equal(describeError('odd', false, 5000), 'odd')
  t.equal(describeError(new Error('a\n  b'.repeat(200)), false, 5000).length, 300)
  t.notMatch(describeError(new Error('boom'), false, 5000), /\bat /)
})
