import { Writable } from 'node:stream'
import t from 'tap'
import { pino } from 'pino'
import { RequestLogger, requestLogger, type ParentLogger } from '../../lib/request-logger.js'

/** A pino logger at `level` whose lines are collected, seen through a parent that counts the children made. */
function logger (level: string): { parent: ParentLogger, lines: Array<Record<string, unknown>>, children: () => number } {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _enc, cb) { lines.push(JSON.parse(String(chunk))); cb() } })
  const real = pino({ level }, stream)
  let made = 0
  const parent: ParentLogger = {
    get level () { return real.level },
    child: (bindings, options) => { made++; return real.child(bindings, options) }
  }
  return { parent, lines, children: () => made }
}

t.test('a request that logs nothing at an enabled level makes no child', async t => {
  const { parent, lines, children } = logger('warn')
  const log = new RequestLogger(parent, { reqId: 'req-1' }, {})
  log.info({ req: 'x' }, 'incoming request')
  log.debug('detail')
  log.trace('more')
  t.equal(children(), 0, 'no child made')
  t.strictSame(lines, [])
  t.equal(log.level, 'warn', "the parent's level")
  t.ok(requestLogger(parent, { reqId: 'req-1' }, {}) instanceof RequestLogger, "Fastify's childLoggerFactory makes one")
})

t.test('the first line at an enabled level makes the child: every line carries the request id', async t => {
  const { parent, lines, children } = logger('warn')
  const log = new RequestLogger(parent, { reqId: 'req-2' }, {})
  log.warn('first')
  log.error({ err: new Error('boom') }, 'second')
  log.fatal('third')
  t.equal(children(), 1, 'one child, made once')
  t.strictSame(lines.map(l => [l.reqId, l.msg, l.level]), [['req-2', 'first', 40], ['req-2', 'second', 50], ['req-2', 'third', 60]])
  t.match(lines[1], { err: { message: 'boom', type: 'Error' } }, 'serializers apply as on any pino child')
})

t.test('at info every level from info logs; a route level and child loggers are honoured', async t => {
  const { parent, lines } = logger('info')
  const log = new RequestLogger(parent, { reqId: 'req-3' }, {})
  log.info('hello %s', 'there')
  log.debug('hidden')
  t.strictSame(lines.map(l => l.msg), ['hello there'])
  ;(log.child({ part: 'x' }) as pino.Logger).info('from a child')
  t.match(lines[1], { reqId: 'req-3', part: 'x', msg: 'from a child' })

  const quiet = new RequestLogger(parent, { reqId: 'req-4' }, { level: 'error' })
  t.equal(quiet.level, 'error')
  t.equal(quiet.isLevelEnabled('warn'), false)
  quiet.warn('not logged')
  quiet.error('logged')
  t.strictSame(lines.slice(2).map(l => [l.reqId, l.msg]), [['req-4', 'logged']])
  quiet.silent()
  t.equal(quiet.isLevelEnabled('nonsense'), false, 'an unknown level is never enabled')

  const { parent: silentParent, lines: none } = logger('silent')
  new RequestLogger(silentParent, { reqId: 'req-5' }, {}).fatal('nothing at silent')
  t.strictSame(none, [])
})
