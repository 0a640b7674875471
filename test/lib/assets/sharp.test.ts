import t from 'tap'
import { loadSharp } from '../../../lib/assets/sharp.js'

t.test('sharp is loaded once, with one libvips thread per image and no operation cache', async t => {
  const [a, b] = await Promise.all([loadSharp(), loadSharp()])
  t.equal(a, b, 'one module')
  t.equal(a.concurrency(), 1)
  t.match(a.cache(), { memory: { max: 0 }, files: { max: 0 }, items: { max: 0 } })
})
