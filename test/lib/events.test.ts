import t from 'tap'
import { EventBus } from '../../lib/events.js'
import type { CmsEvent } from '../../types/events.js'

const event: CmsEvent = { event: 'schema.created', name: 'post' }

t.test('listeners receive events in emit; a failing listener cannot break emit or others', async t => {
  const errors: unknown[] = []
  const bus = new EventBus(err => { errors.push(err) })
  const seen: string[] = []
  bus.on(() => { throw new Error('boom') })
  bus.on(async () => { throw new Error('async boom') })
  const off = bus.on(e => { seen.push(e.event) })
  t.doesNotThrow(() => { bus.emit(event) })
  t.same(seen, ['schema.created'], 'delivered synchronously')
  await new Promise(resolve => setImmediate(resolve))
  t.equal(errors.length, 2, 'both failures reported')
  off()
  bus.emit(event)
  t.same(seen, ['schema.created'], 'removed listener no longer called')
})

t.test('settled: waits for every asynchronous listener, and for the events they emit in turn', async t => {
  const errors: unknown[] = []
  const bus = new EventBus(err => { errors.push(err) })
  await bus.settled()
  t.pass('nothing pending: settles at once')
  const done: string[] = []
  let release = (): void => {}
  const gate = new Promise<void>(resolve => { release = resolve })
  bus.on(async e => {
    if (e.event !== 'schema.created') return
    await gate
    done.push('first')
    bus.emit({ event: 'schema.updated', name: 'post' })
  })
  bus.on(async e => {
    if (e.event !== 'schema.updated') return
    await new Promise(resolve => setTimeout(resolve, 20))
    done.push('second')
  })
  bus.on(async () => { throw new Error('fails') })
  bus.emit(event)
  let settled = false
  const waiting = bus.settled().then(() => { settled = true })
  await new Promise(resolve => setTimeout(resolve, 20))
  t.notOk(settled, 'not while a listener is still working')
  release()
  await waiting
  t.same(done, ['first', 'second'], 'the event emitted by a listener was waited for too')
  t.equal(errors.length, 2, 'failures are reported and do not stop it')
})
