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
