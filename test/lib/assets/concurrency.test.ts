import t from 'tap'
import { Limiter } from '../../../lib/assets/concurrency.js'

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
