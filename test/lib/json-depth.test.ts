// The nesting measures of lib/json-depth.ts: the text scan of request bodies and the walk of
// stored values agree with the depth JSON.parse sees, strings and escapes included.
import t from 'tap'
import fc from 'fast-check'
import { textDepthExceeds, valueDepthExceeds } from '../../lib/json-depth.js'

/** The depth of a parsed value, recursively (the reference; values here are shallow). */
function depth (value: unknown): number {
  if (value === null || typeof value !== 'object') return 0
  const children = Array.isArray(value) ? value : Object.values(value)
  return 1 + Math.max(0, ...children.map(depth))
}

t.test('text: exact at the limit, with strings skipped', async t => {
  t.equal(textDepthExceeds('{"a":[[1]]}', 3), false)
  t.equal(textDepthExceeds('{"a":[[1]]}', 2), true)
  t.equal(textDepthExceeds('[{},{},[]]', 2), false)
  t.equal(textDepthExceeds('"[[[[" ', 0), false, 'brackets in a string are text')
  t.equal(textDepthExceeds('["\\"[[[" ]', 1), false, 'an escaped quote does not end the string')
  t.equal(textDepthExceeds('["\\\\", [[1]]]', 2), true, 'an escaped backslash does end it')
  t.equal(textDepthExceeds('["\\\\\\"[[", 1]', 1), false, 'three backslashes escape the quote')
  t.equal(textDepthExceeds('["unterminated [[[[', 1), false, 'an unterminated string is left to the parser')
  t.equal(textDepthExceeds('', 0), false)
  t.equal(textDepthExceeds('1', 0), false, 'a scalar has no depth')
})

t.test('value: exact at the limit, and any depth without recursion', async t => {
  t.equal(valueDepthExceeds({ a: [[1]] }, 3), false)
  t.equal(valueDepthExceeds({ a: [[1]] }, 2), true)
  t.equal(valueDepthExceeds('x', 0), false)
  t.equal(valueDepthExceeds(null, 0), false)
  let deep: unknown = 1
  for (let i = 0; i < 200_000; i++) deep = [deep]
  t.equal(valueDepthExceeds(deep, 1000), true, '200,000 levels are measured')
  t.equal(valueDepthExceeds(deep, 200_000), false)
})

t.test('both agree with the parsed depth of generated JSON', async t => {
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 7 }), (value, max) => {
    const text = JSON.stringify(value)
    const actual = depth(value)
    const over = actual > max
    return textDepthExceeds(text, max) === over && valueDepthExceeds(value, max) === over
  }), { seed: 28, numRuns: 2000 })
})
