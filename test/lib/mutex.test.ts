import t from 'tap'
import { setImmediate as tick } from 'node:timers/promises'
import { KeyedMutex } from '../../lib/mutex.js'

t.test('tasks under one key run one at a time, in order', async t => {
  const mutex = new KeyedMutex()
  const log: string[] = []
  let running = 0
  let most = 0
  const task = (name: string) => async () => {
    running++
    most = Math.max(most, running)
    log.push(`start ${name}`)
    await tick()
    await tick()
    log.push(`end ${name}`)
    running--
    return name
  }
  const results = await Promise.all(['a', 'b', 'c'].map(n => mutex.run('k', task(n))))
  t.same(results, ['a', 'b', 'c'])
  t.equal(most, 1, 'never two at once')
  t.same(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c'])
  t.equal(mutex.size, 0, 'the key is released when idle')
})

t.test('different keys do not wait for each other', async t => {
  const mutex = new KeyedMutex()
  let release!: () => void
  const blocker = new Promise<void>(resolve => { release = resolve })
  const first = mutex.run('a', async () => { await blocker; return 'a' })
  const second = await mutex.run('b', async () => 'b')
  t.equal(second, 'b', 'b ran while a was still held')
  t.equal(mutex.size, 1)
  release()
  t.equal(await first, 'a')
  t.equal(mutex.size, 0)
})

t.test('a failing task releases the lock and passes its error on', async t => {
  const mutex = new KeyedMutex()
  const failing = mutex.run('k', async () => { await tick(); throw new Error('boom') })
  const next = mutex.run('k', async () => 'next')
  await t.rejects(failing, /boom/)
  t.equal(await next, 'next')
  t.equal(mutex.size, 0)
})

t.test('a synchronous throw inside the task is a rejection, not a crash', async t => {
  const mutex = new KeyedMutex()
  await t.rejects(mutex.run('k', () => { throw new Error('sync') }), /sync/)
  t.equal(await mutex.run('k', async () => 1), 1)
})
