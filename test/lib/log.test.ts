import { Writable } from 'node:stream'
import { pino, type Logger } from 'pino'
import t from 'tap'
import { DeferredChildLogger, type ParentLogger } from '../../lib/log.js'

function capture (level: string): { logger: Logger, lines: () => Array<Record<string, unknown>> } {
  const out: string[] = []
  const sink = new Writable({ write (chunk: Buffer, _enc, done) { out.push(chunk.toString()); done() } })
  return { logger: pino({ level }, sink), lines: () => out.join('').split('\n').filter(l => l !== '').map(l => JSON.parse(l) as Record<string, unknown>) }
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
  let made = 0
  const parent = logger as unknown as ParentLogger
  const counting = Object.create(parent) as ParentLogger
  counting.child = (bindings, options) => { made++; return parent.child(bindings, options) }
  const log = new DeferredChildLogger(counting, { reqId: 'req-2' })
  log.info('dropped')
  log.debug('dropped')
  log.trace('dropped')
  t.equal(made, 0, 'nothing logged, no child')
  log.warn('kept')
  log.fatal('kept too')
  t.equal(made, 1, 'one child, made once')
  t.match(lines(), [{ level: 40, reqId: 'req-2', msg: 'kept' }, { level: 60, reqId: 'req-2' }])
})

t.test('a level of its own makes the child at once', async t => {
  const { logger, lines } = capture('warn')
  const log = new DeferredChildLogger(logger as unknown as ParentLogger, { reqId: 'req-3' }, { level: 'debug' })
  t.equal(log.level, 'debug')
  log.debug('seen')
  t.match(lines(), [{ level: 20, reqId: 'req-3', msg: 'seen' }])
})
