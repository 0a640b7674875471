// The instance's options and logger as server.ts builds them.
import { Writable } from 'node:stream'
import Fastify, { type FastifyBaseLogger } from 'fastify'
import t from 'tap'
import { createLogger, serverOptions } from '../../lib/server-options.js'
import { tempDir, testConfig } from '../helper.js'

type Line = Record<string, unknown> & { level: number, msg?: string }

function sink (lines: Line[]): Writable {
  return new Writable({
    write (chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line) as Line)
      done()
    }
  })
}

t.test('createLogger: CMS_LOG_LEVEL, secrets redacted from logged headers', async t => {
  const lines: Line[] = []
  const logger = createLogger(testConfig(tempDir(t), { CMS_LOG_LEVEL: 'warn' }), sink(lines))
  t.equal(logger.level, 'warn')
  logger.info('not at warn')
  logger.warn({ req: { headers: { authorization: 'Bearer secret-1', 'x-api-key': 'secret-2', cookie: 'secret-3', accept: '*/*' } } }, 'headers')
  t.equal(lines.length, 1)
  t.notMatch(JSON.stringify(lines), /secret-/, 'no credential in the line')
  t.match(lines[0], { level: 40, msg: 'headers' })
})

t.test('given to Fastify: request lines show the fields Fastify\'s own serializers show, bound to the request id', async t => {
  const lines: Line[] = []
  const config = testConfig(tempDir(t), { CMS_LOG_LEVEL: 'info' })
  const logger: FastifyBaseLogger = createLogger(config, sink(lines))
  const fastify = Fastify({ ...serverOptions(config), loggerInstance: logger })
  t.teardown(async () => { await fastify.close() })
  fastify.get('/x', async () => ({ ok: true }))
  await fastify.inject({ url: '/x?y=1', headers: { authorization: 'Bearer not-for-logs', 'accept-version': '1' } })
  t.match(lines, [
    { level: 30, reqId: /^req-/, msg: 'incoming request', req: { method: 'GET', url: '/x?y=1', version: '1', host: 'localhost:80', remoteAddress: '127.0.0.1' } },
    { level: 30, reqId: /^req-/, msg: 'request completed', res: { statusCode: 200 }, responseTime: Number }
  ])
  t.notMatch(JSON.stringify(lines), /not-for-logs/, 'the request is logged without its headers')
})

t.test('serverOptions: the settings that shape the instance', async t => {
  const options = serverOptions(testConfig(tempDir(t), { CMS_BODY_LIMIT: '2048', CMS_TRUST_PROXY: 'true' }))
  t.equal(options.bodyLimit, 2048)
  t.equal(options.trustProxy, true)
  const fastify = Fastify(options)
  t.teardown(async () => { await fastify.close() })
  fastify.post('/echo', async request => request.body)
  fastify.get('/p/:id', async request => request.params)
  t.equal((await fastify.inject({ method: 'POST', url: '/echo', payload: { big: 'x'.repeat(3000) } })).statusCode, 413, 'the body limit')
  t.equal((await fastify.inject({ url: '/p/abc/' })).statusCode, 200, 'trailing slashes ignored')
  t.equal((await fastify.inject({ url: `/p/${'a'.repeat(400)}` })).statusCode, 200, 'long path parameters (slugs) accepted')
  const poisoned = await fastify.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{"__proto__":{"x":1}}' })
  t.equal(poisoned.statusCode, 400, '__proto__ keys refused')
})

t.test('keys in the query string are redacted from logged URLs at info (issue 28 item 13)', async t => {
  const lines: Line[] = []
  const key = 'configured-key-0123456789abcdef'
  const config = testConfig(tempDir(t), { CMS_LOG_LEVEL: 'info', CMS_API_KEY: key })
  const logger: FastifyBaseLogger = createLogger(config, sink(lines))
  const fastify = Fastify({ ...serverOptions(config), loggerInstance: logger })
  t.teardown(async () => { await fastify.close() })
  fastify.get('/x', async () => ({ ok: true }))
  await fastify.inject({ url: `/x?_page=2&api_key=guessed-secret-1&ACCESS%5FTOKEN=guessed-secret-2&q=${encodeURIComponent(key + '/+')}&token` })
  const urls = lines.filter(l => l.msg === 'incoming request').map(l => (l.req as { url: string }).url)
  t.strictSame(urls, ['/x?_page=2&api_key=[redacted]&ACCESS%5FTOKEN=[redacted]&q=[redacted]%2F%2B&token'])
  t.notMatch(JSON.stringify(lines), /guessed-secret|configured-key/, 'no key anywhere in the lines')
})

t.test('redactUrl: paths, bad encodings and URLs without a query pass through', async t => {
  const { redactUrl } = await import('../../lib/server-options.js')
  t.equal(redactUrl('/api/content/post'), '/api/content/post')
  t.equal(redactUrl('/a?%E0%A4%A=1&key=2'), '/a?%E0%A4%A=1&key=[redacted]', 'a name that does not decode is kept as sent')
  t.equal(redactUrl('/a/secret-key-in-the-path-123?x=1', ['secret-key-in-the-path-123']), '/a/[redacted]?x=1')
})

t.test('errors are logged with their type, message and code, never their stack', async t => {
  const lines: Line[] = []
  const logger = createLogger(testConfig(tempDir(t), { CMS_LOG_LEVEL: 'info' }), sink(lines))
  const err = Object.assign(new TypeError('the database is away'), { code: 'ECONNREFUSED' })
  logger.error({ err }, 'failed')
  logger.child({ component: 'store' }).warn({ err: new Error('nested') }, 'from a child')
  t.match(lines[0], { msg: 'failed', err: { type: 'TypeError', message: 'the database is away', code: 'ECONNREFUSED' } })
  t.match(lines[1], { msg: 'from a child', component: 'store', err: { type: 'Error', message: 'nested' } })
  t.notMatch(JSON.stringify(lines), /\bat |stack|server-options/, 'no stack trace, no source path')
})
