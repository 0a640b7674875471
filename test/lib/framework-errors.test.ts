// The envelope for errors raised before a route runs, handler by handler (the app-level test,
// over a socket, is test/routes/envelope.test.ts).
import { PassThrough } from 'node:stream'
import t from 'tap'
import { clientErrorHandler, frameworkErrors, requireHost } from '../../lib/framework-errors.js'

/** A fake reply that records what frameworkErrors sends. */
function recorder (): { reply: { code: (n: number) => { send: (body: never) => void } }, sent: Array<{ status: number, body: unknown }> } {
  const sent: Array<{ status: number, body: unknown }> = []
  return { sent, reply: { code: status => ({ send: (body: never) => { sent.push({ status, body }) } }) } }
}

/** A socket-like stream whose written bytes can be read back. */
function socket (): { stream: PassThrough, written: () => string } {
  const stream = new PassThrough()
  let out = ''
  stream.on('data', (chunk: Buffer) => { out += chunk.toString() })
  return { stream, written: () => out }
}

t.test('frameworkErrors: the router\'s two errors are 400s, anything else a generic 500', async t => {
  const { reply, sent } = recorder()
  frameworkErrors({ code: 'FST_ERR_BAD_URL' }, null, reply)
  frameworkErrors({ code: 'FST_ERR_MAX_PARAM_LENGTH' }, null, reply)
  frameworkErrors({ code: 'FST_ERR_ASYNC_CONSTRAINT' }, null, reply)
  frameworkErrors({}, null, reply)
  t.match(sent, [
    { status: 400, body: { statusCode: 400, code: 'BAD_REQUEST', message: /not UTF-8/ } },
    { status: 400, body: { statusCode: 400, code: 'BAD_REQUEST', message: /longer than 500 characters/ } },
    { status: 500, body: { statusCode: 500, code: 'INTERNAL', message: 'An internal error occurred.' } },
    { status: 500, body: { code: 'INTERNAL' } }
  ])
})

t.test('clientErrorHandler: a 400 in the envelope, then the connection ends', async t => {
  const timeout = socket()
  clientErrorHandler({ code: 'ERR_HTTP_REQUEST_TIMEOUT' }, timeout.stream)
  await new Promise(resolve => setImmediate(resolve))
  const [head = '', body = ''] = timeout.written().split('\r\n\r\n')
  t.match(head, /^HTTP\/1\.1 400 Bad Request\r\n/)
  t.match(head, /\r\nConnection: close/)
  t.match(head, new RegExp(`Content-Length: ${Buffer.byteLength(body)}`))
  t.match(JSON.parse(body), { statusCode: 400, error: 'Bad Request', code: 'BAD_REQUEST', message: 'The request was not received in time.' })
  t.equal(timeout.stream.writableEnded, true, 'the socket is ended')

  const parse = socket()
  clientErrorHandler({ code: 'HPE_INVALID_METHOD' }, parse.stream)
  await new Promise(resolve => setImmediate(resolve))
  t.match(parse.written(), /"message":"The request is not valid HTTP\."/)

  const reset = socket()
  clientErrorHandler({ code: 'ECONNRESET' }, reset.stream)
  const closed = socket()
  closed.stream.destroy()
  clientErrorHandler({ code: 'HPE_INVALID_METHOD' }, closed.stream)
  await new Promise(resolve => setImmediate(resolve))
  t.equal(reset.written(), '', 'nothing to a reset connection')
  t.equal(closed.written(), '', 'nothing to a closed one')

  const ended = socket()
  ended.stream.end()
  clientErrorHandler({ code: 'HPE_INVALID_METHOD' }, ended.stream)
  t.equal(ended.stream.destroyed, true, 'a socket that cannot be written is destroyed')
})

t.test('requireHost: HTTP/1.1 without Host is a 400; HTTP/1.0 needs none', async t => {
  const request = (httpVersion: string, headers: Record<string, string>): { raw: never } => ({ raw: { httpVersion, headers } as never })
  const verdict = (req: ReturnType<typeof request>): Error | undefined => {
    let given: Error | undefined
    let calls = 0
    requireHost(req, null, err => { given = err; calls++ })
    t.equal(calls, 1, 'done is called once, at once')
    return given
  }
  t.match(verdict(request('1.1', {})), { code: 'BAD_REQUEST', statusCode: 400 })
  t.equal(verdict(request('1.1', { host: 'x' })), undefined)
  t.equal(verdict(request('1.0', {})), undefined)
})
