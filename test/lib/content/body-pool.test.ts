import t from 'tap'
import { BodyPool } from '../../../lib/content/body-pool.js'

const ascii = (n: number, c = 'a'): string => c.repeat(n)

t.test('short texts are not pooled', async t => {
  t.equal(new BodyPool().encode('{"a":1}'), null)
  t.equal(new BodyPool({ minLength: 10 }).encode('123456789'), null)
})

t.test('by default, texts from half Buffer.poolSize are pooled: those Buffer.from would give a buffer of their own', async t => {
  const threshold = Buffer.poolSize >>> 1
  t.equal(new BodyPool().encode(ascii(threshold - 1)), null)
  const pooled = new BodyPool().encode(ascii(threshold))
  t.equal(pooled?.bytes.toString(), ascii(threshold))
  t.not(Buffer.from(ascii(threshold - 1)).buffer.byteLength, threshold - 1, 'just below: Buffer.from shares its slab')
  t.equal(Buffer.from(ascii(threshold)).buffer.byteLength, threshold, 'at the threshold: a buffer of its own')
})

t.test('a long text is its UTF-8 bytes, whatever its characters', async t => {
  const pool = new BodyPool({ minLength: 100 })
  for (const text of [
    ascii(5000),
    ascii(3000, 'é'), // two bytes each: does not fit the first guess
    `x${'😀'.repeat(2000)}`, // surrogate pairs, four bytes each
    ascii(1000, '€') + ascii(1000) // three bytes each, then ASCII
  ]) {
    const body = pool.encode(text)
    t.ok(body !== null)
    t.ok(body?.bytes.equals(Buffer.from(text)), `${text.slice(0, 3)}…: the same bytes as Buffer.from`)
    body?.release()
  }
})

t.test('released memory is reused; memory in use never is', async t => {
  const pool = new BodyPool({ minLength: 100 })
  const a = pool.encode(ascii(4000, 'a'))
  const b = pool.encode(ascii(4000, 'b'))
  t.ok(a !== null && b !== null)
  t.not(a?.bytes.buffer, b?.bytes.buffer, 'two bodies in use have their own memory')
  t.equal(a?.bytes.toString(), ascii(4000, 'a'), 'the first is intact after the second')
  a?.release()
  a?.release()
  t.equal(pool.freeCount, 1, 'a second release does nothing')
  const c = pool.encode(ascii(3000, 'c'))
  t.equal(c?.bytes.buffer, a?.bytes.buffer, 'the released memory is taken again')
  t.equal(c?.bytes.toString(), ascii(3000, 'c'))
  t.equal(b?.bytes.toString(), ascii(4000, 'b'), 'the one still in use is untouched')
  t.equal(pool.freeCount, 0)
})

t.test('limits: the largest body, and buffers kept free per size', async t => {
  const pool = new BodyPool({ minLength: 100, maxBytes: 8192, freePerSize: 2 })
  t.equal(pool.encode(ascii(9000)), null, 'longer than maxBytes')
  t.equal(pool.encode(ascii(3000, '€')), null, 'fits at one byte a character, not at its real size')
  t.equal(pool.freeCount, 1, 'the buffer tried first is kept for the next body')
  const bodies = [1, 2, 3].map(() => pool.encode(ascii(5000)))
  for (const body of bodies) body?.release()
  t.equal(pool.freeCount, 3, 'two of the 8 KB size (a third is left to the collector) and the 4 KB one')
})

t.test('limits: bytes kept free in all', async t => {
  const pool = new BodyPool({ minLength: 100, maxFreeBytes: 10 * 1024 })
  const bodies = [pool.encode(ascii(5000)), pool.encode(ascii(3000))]
  for (const body of bodies) body?.release()
  t.equal(pool.freeCount, 1, 'the 8 KB buffer is kept; the 4 KB one would go over 10 KB')
  pool.encode(ascii(5000))
  const small = pool.encode(ascii(3000))
  small?.release()
  t.equal(pool.freeCount, 1, 'taking the 8 KB one out made room for the 4 KB one')
})

t.test('alloc: exactly the bytes asked for, in pooled memory, within the same limits', async t => {
  const pool = new BodyPool({ minLength: 100, maxBytes: 8192 })
  t.equal(pool.alloc(99), null, 'fewer bytes than minLength')
  t.equal(pool.alloc(8193), null, 'more than maxBytes')
  const a = pool.alloc(5000)
  t.equal(a?.bytes.length, 5000)
  t.equal(a?.bytes.buffer.byteLength, 8192, 'in a power-of-two buffer')
  a?.bytes.fill(1)
  a?.release()
  const b = pool.alloc(6000)
  t.equal(b?.bytes.buffer, a?.bytes.buffer, 'released memory is taken again')
  t.equal(b?.bytes.length, 6000)
  const c = pool.alloc(6000)
  t.not(c?.bytes.buffer, b?.bytes.buffer, 'memory in use never is')
})

t.test('limits: free bytes never over maxFreeBytes, whatever is released', async t => {
  const max = 40 * 1024
  const pool = new BodyPool({ minLength: 100, maxFreeBytes: max })
  let seed = 11
  const random = (): number => { seed = (seed * 48271) % 2147483647; return seed / 2147483647 }
  const lent: Array<{ release: () => void }> = []
  let most = 0
  for (let n = 0; n < 500; n++) {
    if (random() < 0.55) {
      const body = pool.alloc(100 + Math.floor(random() * 20_000))
      if (body !== null) lent.push(body)
    } else {
      lent.splice(Math.floor(random() * lent.length), 1)[0]?.release()
    }
    if (pool.freeBytes > max) t.fail(`step ${n}: ${pool.freeBytes} bytes free`)
    most = Math.max(most, pool.freeBytes)
  }
  t.ok(most > max / 2, `the bound was reached for: ${most} bytes free at most`)
  for (const body of lent) body.release()
  t.ok(pool.freeBytes > 0 && pool.freeBytes <= max, `${pool.freeBytes} bytes free at the end`)
})

t.test('limits: a body whose buffer could never be kept free is not pooled; 0 pools nothing', async t => {
  const pool = new BodyPool({ minLength: 100, maxFreeBytes: 6 * 1024 })
  t.equal(pool.alloc(4096)?.bytes.buffer.byteLength, 4096)
  t.equal(pool.alloc(4097), null, 'an 8 KB buffer: over the 6 KB kept free')
  t.equal(pool.encode(ascii(4097)), null)
  const off = new BodyPool({ minLength: 100, maxFreeBytes: 0 })
  t.equal(off.alloc(1000), null)
  t.equal(off.encode(ascii(1000)), null)
  t.equal(off.freeBytes, 0)
})
