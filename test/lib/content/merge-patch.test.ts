import t from 'tap'
import { applyMergePatch } from '../../../lib/content/merge-patch.js'

// The examples of RFC 7396 Appendix A.
const rfc: Array<[unknown, unknown, unknown]> = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [['a', 'b'], ['c', 'd'], ['c', 'd']],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }]
]

t.test('RFC 7396 appendix A', async t => {
  for (const [target, patch, result] of rfc) {
    t.same(applyMergePatch(target, patch), result, `${JSON.stringify(target)} + ${JSON.stringify(patch)}`)
  }
})

t.test('inputs are never modified', async t => {
  const target = { a: { b: 1, c: [1, 2] }, d: 'x' }
  const patch = { a: { b: 2 }, d: null }
  const copyT = structuredClone(target)
  const copyP = structuredClone(patch)
  const result = applyMergePatch(target, patch) as Record<string, unknown>
  t.same(target, copyT)
  t.same(patch, copyP)
  t.same(result, { a: { b: 2, c: [1, 2] } })
  t.not(result.a, target.a)
})

t.test('a __proto__ member is data, never a prototype', async t => {
  const patch = JSON.parse('{"__proto__":{"polluted":true},"a":{"__proto__":{"x":1}}}') as unknown
  const result = applyMergePatch({ a: {} }, patch) as Record<string, unknown>
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched')
  t.equal(Object.getPrototypeOf(result), Object.prototype)
  t.ok(Object.hasOwn(result, '__proto__'), 'kept as an own member')
  t.same(JSON.parse(JSON.stringify(result)), JSON.parse('{"__proto__":{"polluted":true},"a":{"__proto__":{"x":1}}}'))
})
