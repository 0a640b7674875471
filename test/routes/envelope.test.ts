// Errors raised before a route runs answer in the contract's envelope (issue 28 item 5), on both
// stores: the router's (bad percent-encoding, an over-long path parameter), Node's HTTP parser's
// (a space in the request target, bad headers, headers over the limit, a request not received
// in time), what Node would answer itself (no Host, an unmet Expect, CONNECT), and Fastify's 503
// to a request that arrives while the server closes.
import net, { type AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { assertError, assertShape, build, eachStore } from '../helper.js'
import { ErrorReply } from '../../types/errors.js'
import { sendRaw, type RawAnswer } from '../fuzz/raw.js'

function assertRawError (t: Test, answer: RawAnswer, message: RegExp): void {
  t.equal(answer.statusCode, 400, 'status 400')
  t.match(answer.headers['content-type'], /^application\/json/)
  const body = JSON.parse(answer.body.toString())
  assertShape(t, ErrorReply, body, 'the envelope')
  t.match(body, { statusCode: 400, error: 'Bad Request', code: 'BAD_REQUEST', message })
}

eachStore(t, async (t, _store, env) => {
  t.test('the router: a path that is not UTF-8, a path parameter over 500 characters', async t => {
    const app = await build(t, env)
    for (const url of ['/api/content/post/%c0%ae', '/api/content/%ff', '/api/schemas/%e0%80/raw', '/api/assets/%c0%ae/x.png', '/api/content/%']) {
      const res = await app.inject({ method: 'GET', url })
      assertError(t, res, 400, 'BAD_REQUEST')
      t.equal(res.json().message, 'The request path is not valid: a percent-encoded part of it is not UTF-8.', url)
      t.notMatch(res.body, /%c0|%ff|%e0/i, 'the path is not echoed')
    }
    const long = 'x'.repeat(501)
    for (const url of [`/api/content/${long}`, `/api/content/post/${long}`, `/api/schemas/${long}/raw`, `/api/collections/${long}/slug-check`]) {
      const res = await app.inject({ method: url.startsWith('/api/content/post/') ? 'PATCH' : 'GET', url, payload: url.startsWith('/api/content/post/') ? {} : undefined })
      assertError(t, res, 400, 'BAD_REQUEST')
      t.equal(res.json().message, 'A part of the request path is longer than 500 characters.')
    }
    t.equal((await app.inject({ method: 'GET', url: `/api/content/post/${'x'.repeat(500)}` })).json().code, 'NOT_FOUND', '500 characters reach the route')
  })

  t.test('over a socket: what Node refuses or answers itself', async t => {
    const app = await build(t, env, { server: { requestTimeout: 1000, http: { requireHostHeader: false, requestTimeout: 1000, connectionsCheckingInterval: 100 } } })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const port = (app.server.address() as AddressInfo).port
    const request = (head: string, body = ''): string => `${head}\r\n\r\n${body}`
    const cases: Array<[string, string, RegExp]> = [
      ['a space in the request target', request('GET /api/content/a b HTTP/1.1\r\nHost: x\r\nConnection: close'), /not valid HTTP/],
      ['a control character in the target', request('GET /api/content/\u0001 HTTP/1.1\r\nHost: x'), /not valid HTTP/],
      ['a header line without a colon', request('GET /health HTTP/1.1\r\nHost: x\r\nBad Header: x'), /not valid HTTP/],
      ['an unknown method token', request('G@T /health HTTP/1.1\r\nHost: x'), /not valid HTTP/],
      ['an unknown HTTP version', request('GET /health HTTP/9.9\r\nHost: x'), /not valid HTTP/],
      ['Content-Length with Transfer-Encoding', request('POST /api/schemas HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked', '0\r\n\r\n'), /not valid HTTP/],
      ['a bad chunk size', request('POST /api/schemas HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json', 'zz\r\n{}\r\n0\r\n\r\n'), /not valid HTTP/],
      ['two Content-Lengths', request('POST /api/schemas HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3', '{}'), /not valid HTTP/],
      ['headers over the limit', request(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}`), /headers are larger than the server accepts/],
      ['a body that never comes', request('POST /api/schemas HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10', '{}'), /not received in time/],
      ['an HTTP/1.1 request without Host', request('GET /health HTTP/1.1\r\nConnection: close'), /must have a Host header/],
      ['an Expect other than 100-continue', request('GET /health HTTP/1.1\r\nHost: x\r\nExpect: nonsense'), /Expect header is not supported/],
      ['CONNECT', request('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443'), /CONNECT is not supported/],
      ['a bad percent-encoding', request('GET /api/content/%c0%ae HTTP/1.1\r\nHost: x\r\nConnection: close'), /not UTF-8/]
    ]
    for (const [name, raw, message] of cases) {
      const answer = await sendRaw(port, raw)
      t.test(name, async t => { assertRawError(t, answer, message) })
    }
    t.equal((await sendRaw(port, request('GET /health HTTP/1.0'))).statusCode, 200, 'HTTP/1.0 needs no Host')
    const continued = await sendRaw(port, request('GET /health HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close'))
    t.equal(continued.statusCode, 200, 'Expect: 100-continue is met')
  })

  t.test('a request on an open connection while the server closes: 503 in the envelope', async t => {
    const app = await build(t, env, { keepOpen: true })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const socket = net.connect((app.server.address() as AddressInfo).port, '127.0.0.1')
    t.teardown(() => { socket.destroy() })
    let received = ''
    socket.on('data', chunk => { received += chunk.toString() })
    const answers = async (n: number): Promise<void> => {
      while (received.split('HTTP/1.1 ').length - 1 < n) await new Promise(resolve => socket.once('data', resolve))
    }
    // A request in flight keeps the connection active: its body is sent once Node has taken it (100 Continue).
    socket.write('POST /api/schemas HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n')
    await answers(1)
    t.match(received, /^HTTP\/1\.1 100 Continue/)
    const closed = app.close()
    // Its body, and a second request pipelined behind it, which arrives while the server closes.
    socket.write('{}GET /health HTTP/1.1\r\nHost: x\r\n\r\n')
    await answers(3)
    t.match(received, /HTTP\/1\.1 400 Bad Request\r\n/, 'the request in flight is answered')
    const second = received.slice(received.lastIndexOf('HTTP/1.1 '))
    t.match(second, /^HTTP\/1\.1 503 /)
    t.match(second, /\r\nconnection: close\r\n/i)
    const body = JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4))
    assertShape(t, ErrorReply, body, 'the envelope, not Fastify\'s own 503 body')
    t.match(body, { statusCode: 503, error: 'Service Unavailable', code: 'UNAVAILABLE' })
    await closed
  })
})
