import { Writable } from 'node:stream'
import { pino, type Logger } from 'pino'
import t from 'tap'
import { DeferredChildLogger, deferringChildren, type ParentLogger } from '../../lib/log.js'

function capture (level: string): { logger: Logger, lines: () => Array<Record<string, unknown>> } {
  const out: string[] = []
  const sink = new Writable({ write (chunk: Buffer, _enc, done) { out.push(chunk.toString()); done() } })
  return { logger: pino({ level }, sink), lines: () => out.join('').split('\n').filter(l => l !== '').map(l => JSON.parse(l) as Record<string, unknown>) }
}

/** `logger`, counting the real children made from it. */
function counting (logger: Logger): { parent: ParentLogger, made: () => number } {
  let made = 0
  const real = logger as unknown as ParentLogger
  const parent = Object.create(real) as ParentLogger
  parent.child = (bindings, options) => { made++; return real.child(bindings, options) }
  return { parent, made: () => made }
}

t.test('logs what the child would, with its bindings', async t => {
  const { logger, lines } = capture('info')
  const log = new DeferredChildLogger(logger as unknown as ParentLogger, { reqId: 'req-1' })
  log.info({ a: 1 }, 'hello')
  log.error('broken %s', 'thing')
  log.debug('not at info')
  t.match(lines(), [
    { level: 30, reqId: 'req-1', a: 1, msg: 'hello' },
    { level: 50, reqId: 'req-1', msg: 'broken thing' }
  ])
  t.equal(lines().length, 2)
  t.equal(log.level, 'info')
  t.ok(log.isLevelEnabled('warn'))
  t.notOk(log.isLevelEnabled('debug'))
  const child = log.child({ component: 'x' })
  child.warn('nested')
  t.match(lines()[2], { level: 40, reqId: 'req-1', component: 'x', msg: 'nested' })
})

t.test('makes no child until a line gets through', async t => {
  const { logger, lines } = capture('warn')
  const { parent, made } = counting(logger)
  const log = new DeferredChildLogger(parent, { reqId: 'req-2' })
  log.info('dropped')
  log.debug('dropped')
  log.trace('dropped')
  t.equal(made(), 0, 'nothing logged, no child')
  log.warn('kept')
  log.fatal('kept too')
  t.equal(made(), 1, 'one child, made once')
  t.match(lines(), [{ level: 40, reqId: 'req-2', msg: 'kept' }, { level: 60, reqId: 'req-2' }])
})

t.test('a level of its own makes the child at once', async t => {
  const { logger, lines } = capture('warn')
  const log = new DeferredChildLogger(logger as unknown as ParentLogger, { reqId: 'req-3' }, { level: 'debug' })
  t.equal(log.level, 'debug')
  log.debug('seen')
  t.match(lines(), [{ level: 20, reqId: 'req-3', msg: 'seen' }])
})

t.test('a child of a deferred child is deferred too, and logs with both bindings and options', async t => {
  const { logger, lines } = capture('warn')
  const { parent, made } = counting(logger)
  // As Fastify does: a root child with its serializers, then one child per request.
  const root = new DeferredChildLogger(parent, {}, { serializers: { res: (res: { code: number }) => ({ statusCode: res.code }) } })
  const request = root.child({ reqId: 'req-4' })
  request.info({ res: { code: 200 } }, 'dropped')
  t.equal(made(), 0, 'neither is made by a line that is dropped')
  t.equal(request.level, 'warn')
  t.notOk(request.isLevelEnabled('info'))
  request.warn({ res: { code: 503 } }, 'kept')
  t.equal(made(), 1, 'the root child is made once, from the real parent')
  t.match(lines(), [{ level: 40, reqId: 'req-4', res: { statusCode: 503 }, msg: 'kept' }])
  root.child({ reqId: 'req-5' }).error('also kept')
  t.equal(made(), 1, 'the made root child is reused')
  t.match(lines()[1], { level: 50, reqId: 'req-5', msg: 'also kept' })
})

t.test('deferringChildren: the same logger, whose children are deferred', async t => {
  const { logger, lines } = capture('warn')
  const { parent, made } = counting(logger)
  const root = deferringChildren(parent)
  root.warn('from the root')
  t.equal(root.level, 'warn')
  const child = root.child({ reqId: 'req-6' })
  t.ok(child instanceof DeferredChildLogger)
  child.info('dropped')
  t.equal(made(), 0)
  child.error('kept')
  t.equal(made(), 1)
  t.match(lines(), [{ level: 40, msg: 'from the root' }, { level: 50, reqId: 'req-6', msg: 'kept' }])
})
