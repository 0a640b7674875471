import t from 'tap'
import { KeyedMutex, Limiter } from '../../../lib/assets/concurrency.js'

const tick = async (): Promise<void> => { await new Promise<void>(resolve => setImmediate(resolve)) }

t.test('Limiter runs at most max tasks at once, in arrival order', async t => {
  const limiter = new Limiter(2)
  let active = 0
  let peak = 0
  const order: number[] = []
  const task = (n: number) => async (): Promise<number> => {
    active++
    peak = Math.max(peak, active)
    order.push(n)
    await tick()
    await tick()
    active--
    return n
  }
  const results = await Promise.all([1, 2, 3, 4, 5, 6].map(async n => await limiter.run(task(n))))
  t.same(results, [1, 2, 3, 4, 5, 6])
  t.equal(peak, 2)
  t.same(order, [1, 2, 3, 4, 5, 6])
  t.equal(limiter.pending, 0)
  t.notOk(limiter.full)
  await t.rejects(limiter.run(async () => { throw new Error('boom') }), /boom/)
  t.equal(await limiter.run(async () => 'still works'), 'still works', 'a failure frees its slot')
  t.throws(() => new Limiter(0))
})

t.test('KeyedMutex serializes one key and lets others run', async t => {
  const mutex = new KeyedMutex()
  const log: string[] = []
  const task = (key: string, n: number) => async (): Promise<void> => {
    log.push(`${key}${n}+`)
    await tick()
    log.push(`${key}${n}-`)
  }
  await Promise.all([
    mutex.run('a', task('a', 1)),
    mutex.run('a', task('a', 2)),
    mutex.run('b', task('b', 1))
  ])
  const a = log.filter(l => l.startsWith('a'))
  t.same(a, ['a1+', 'a1-', 'a2+', 'a2-'], 'one key: one at a time, in order')
  t.ok(log.indexOf('b1+') < log.indexOf('a1-'), 'another key does not wait')
  await t.rejects(mutex.run('a', async () => { throw new Error('x') }), /x/)
  t.equal(await mutex.run('a', async () => 1), 1, 'a failure releases the key')
})
