import t from 'tap'
import { JsonMemo, jsonText, placeholder, spliceJson, writeJsonText } from '../../../lib/content/json-memo.js'

t.test('JsonMemo: made once per entry, shape and variant', async t => {
  const memo = new JsonMemo<object>()
  const entry = Object.freeze({ a: 1 })
  const shapeA = {}
  const shapeB = {}
  let made = 0
  const make = (): unknown => { made++; return { a: 1, é: '"x"' } }
  t.equal(memo.json(entry, shapeA, '', make), JSON.stringify({ a: 1, é: '"x"' }))
  t.equal(memo.json(entry, shapeA, '', make), JSON.stringify({ a: 1, é: '"x"' }))
  t.equal(made, 1, 'kept')
  memo.json(entry, shapeB, '', make)
  t.equal(made, 2, 'another shape (a schema changed) makes it again')
  memo.json(entry, shapeB, 'staging', make)
  t.equal(made, 3, 'another variant too')
  memo.json(Object.freeze({ a: 1 }), shapeB, 'staging', make)
  t.equal(made, 4, 'another entry object (a write) too')
})

t.test('JsonMemo.text: the kept text with its UTF-8 length', async t => {
  const memo = new JsonMemo<object>()
  const entry = Object.freeze({})
  const text = memo.text(entry, {}, '', () => ({ name: 'Zoë 😀' }))
  t.equal(text.json, '{"name":"Zoë 😀"}')
  t.equal(text.bytes, Buffer.byteLength(text.json))
  t.equal(memo.json(entry, {}, '', () => 1), '1', 'a new shape: made again')
})

t.test('jsonText and writeJsonText: the UTF-8 bytes, ASCII or not', async t => {
  // '"\ud800"': a lone surrogate, three bytes (U+FFFD) both in the length and in the write.
  for (const json of ['{"a":1}', '"é"', '"€ and 😀"', '"\\u0000"', JSON.stringify('\ud800'), '"\ud800"', '""']) {
    const text = jsonText(json)
    t.equal(text.bytes, Buffer.from(json).length, `${json}: its length`)
    const target = Buffer.alloc(text.bytes + 4, 0xff)
    t.equal(writeJsonText(target, 2, text), 2 + text.bytes, 'the offset after it')
    t.ok(target.subarray(2, 2 + text.bytes).equals(Buffer.from(json)), `${json}: the bytes Buffer.from gives`)
    t.same([...target.subarray(0, 2), ...target.subarray(2 + text.bytes)], [0xff, 0xff, 0xff, 0xff], 'nothing written around it')
  }
})

t.test('spliceJson', async t => {
  const texts = ['{"x":1}', '[2]', '"three"']
  const json = JSON.stringify({ a: placeholder(0), b: [placeholder(1), 'keep'], c: { d: placeholder(2) } })
  t.equal(spliceJson(json, texts), '{"a":{"x":1},"b":[[2],"keep"],"c":{"d":"three"}}')
  t.equal(spliceJson('{"a":1}', []), '{"a":1}', 'nothing to splice')
  t.equal(spliceJson(JSON.stringify([placeholder(1), placeholder(0)]), ['0', '1']), null, 'out of order')
  t.equal(spliceJson(JSON.stringify([placeholder(0)]), ['0', '1']), null, 'one missing')
  t.equal(spliceJson(JSON.stringify([placeholder(0), placeholder(1)]), ['0']), null, 'one too many')
  t.equal(spliceJson(JSON.stringify([placeholder(0), '\u0000x']), ['0']), null, 'a NUL string in the data')
  t.equal(spliceJson(JSON.stringify({ '\u00000': placeholder(0) }), ['0']), null, 'a key that looks like one')
  t.equal(spliceJson(JSON.stringify(['"\u00000']), []), null, 'an escaped quote before a NUL')
  t.equal(spliceJson(JSON.stringify(['\\u00000', placeholder(0)]), ['[]']), null, 'a backslash-u text: given up too (the caller serializes whole)')
  t.equal(spliceJson(JSON.stringify(['a\\b', placeholder(0)]), ['[]']), '["a\\\\b",[]]', 'other escapes are fine')
})
