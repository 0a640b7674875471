import t from 'tap'
import { JsonMemo, KEPT_OVERHEAD, TextBudget, jsonText, placeholder, spliceJson, textMemory, writeJsonText } from '../../../lib/content/json-memo.js'

/** A memo whose `make` counts its runs, over `n` frozen entries of about `size` characters of JSON each. */
function sized (budget: TextBudget, n: number, size: number): { memo: JsonMemo<object>, entries: object[], read: (i: number) => string, made: () => number } {
  const memo = new JsonMemo<object>(budget)
  const shape = {}
  const entries = Array.from({ length: n }, (_, i) => Object.freeze({ i, text: `${i}:`.padEnd(size, 'x') }))
  let made = 0
  return {
    memo,
    entries,
    read: i => memo.json(entries[i] as object, shape, '', () => { made++; return entries[i] }),
    made: () => made
  }
}

t.test('JsonMemo: kept per entry, shape and variant from its second making', async t => {
  const budget = new TextBudget(1024 * 1024)
  const memo = new JsonMemo<object>(budget)
  const entry = Object.freeze({ a: 1 })
  const shapeA = {}
  const shapeB = {}
  let made = 0
  const make = (): unknown => { made++; return { a: 1, é: '"x"' } }
  t.equal(memo.json(entry, shapeA, '', make), JSON.stringify({ a: 1, é: '"x"' }))
  t.equal(budget.count, 0, 'made once: only noted')
  t.equal(memo.json(entry, shapeA, '', make), JSON.stringify({ a: 1, é: '"x"' }))
  t.equal(budget.count, 1, 'made twice: kept')
  t.equal(memo.json(entry, shapeA, '', make), JSON.stringify({ a: 1, é: '"x"' }))
  t.equal(made, 2, 'and not made again')
  memo.json(entry, shapeB, '', make)
  t.equal(made, 3, 'another shape (a schema changed) makes it again')
  memo.json(entry, shapeB, 'staging', make)
  t.equal(made, 4, 'another variant too')
  memo.json(entry, shapeB, 'staging', make)
  t.equal(made, 4, 'each kept at once: the entry\'s texts are read again')
  const other = Object.freeze({ a: 1 })
  memo.json(other, shapeB, 'staging', make)
  memo.json(other, shapeB, 'staging', make)
  t.equal(made, 6, 'another entry object (a write) is a new entry: made twice before it is kept')
})

t.test('JsonMemo: a scan of entries each read once keeps nothing, and takes nothing from the kept texts', async t => {
  const budget = new TextBudget(1024 * 1024)
  const { read, made } = sized(budget, 1000, 50)
  read(0)
  read(0)
  t.equal(budget.count, 1)
  for (let i = 1; i < 1000; i++) read(i)
  t.equal(budget.count, 1, 'the scan kept no text')
  read(0)
  t.equal(made(), 1001, 'the text kept before it still is')
})

t.test('JsonMemo.text: the kept text with its UTF-8 length', async t => {
  const memo = new JsonMemo<object>(new TextBudget(1024 * 1024))
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

t.test('textMemory: one byte a character for ASCII, otherwise at least two a UTF-16 unit', async t => {
  t.equal(textMemory(jsonText('{"a":1}')), 7)
  t.equal(textMemory(jsonText('"é"')), 6, 'Latin-1: counted as two-byte characters, an upper bound')
  t.equal(textMemory(jsonText('"€€€"')), 11, 'UTF-8 length, more than two a unit')
  t.equal(textMemory(jsonText('"😀"')), 8, 'a surrogate pair: two units of two bytes, and the quotes')
})

t.test('TextBudget: a whole number of bytes', async t => {
  for (const bad of [-1, 1.5, Number.NaN, Infinity]) t.throws(() => new TextBudget(bad), RangeError, String(bad))
  t.equal(new TextBudget(0).bytes, 0)
})

t.test('JsonMemo within its budget: bytes never over it, least recently used out first, remade the same', async t => {
  const text = JSON.stringify({ i: 0, text: '0:'.padEnd(100, 'x') })
  const each = text.length + KEPT_OVERHEAD
  const budget = new TextBudget(each * 3 + 10)
  const { read, made } = sized(budget, 5, 100)
  // Each read twice: kept from its second making.
  const twice = (i: number): string => { read(i); return read(i) }
  twice(0)
  const one = twice(1)
  twice(2)
  t.equal(budget.count, 3)
  t.equal(budget.bytes, each * 3, 'counted: the text and the records that hold it')
  read(0)
  t.equal(made(), 6, 'a kept text is not made again')
  twice(3)
  t.equal(budget.count, 3, 'a fourth lets one go')
  t.ok(budget.bytes <= budget.maxBytes)
  read(0)
  read(2)
  t.equal(made(), 8, '0 (used last but one) and 2 are kept: 1 went, the least recently used')
  t.equal(read(1), one, 'the text let go is made again, the same')
  t.equal(made(), 9)
  read(1)
  t.equal(made(), 9, 'and kept again at once')
  t.ok(budget.bytes <= budget.maxBytes)
})

t.test('JsonMemo within its budget: a text read while half the list turns over is never let go', async t => {
  const text = JSON.stringify({ i: 0, text: '0:'.padEnd(100, 'x') })
  const budget = new TextBudget((text.length + KEPT_OVERHEAD) * 10)
  const { read, made } = sized(budget, 200, 100)
  read(0)
  read(0)
  for (let i = 1; i < 200; i++) {
    // Each new text is made twice (kept), and the first one is read after every fourth.
    read(i)
    read(i)
    if (i % 4 === 0) read(0)
  }
  t.equal(made(), 2 + 199 * 2, 'the first text was never made again')
  t.ok(budget.count >= 9, `the budget full: ${budget.count} texts`)
})

t.test('JsonMemo within its budget: a random run of reads never goes over it, and every text is right', async t => {
  const budget = new TextBudget(20_000)
  const { read, entries } = sized(budget, 200, 0)
  let seed = 7
  const random = (): number => { seed = (seed * 48271) % 2147483647; return seed / 2147483647 }
  for (let n = 0; n < 5000; n++) {
    // Skewed to the first entries, as reads are: some are read often, most seldom.
    const i = Math.floor(random() * random() * entries.length)
    const json = read(i)
    if (json !== JSON.stringify(entries[i])) t.fail(`read ${n}: entry ${i}`)
    if (budget.bytes > budget.maxBytes) t.fail(`read ${n}: ${budget.bytes} bytes`)
  }
  t.ok(budget.count > 0 && budget.count < entries.length, `${budget.count} of ${entries.length} kept`)
  t.ok(budget.bytes <= 20_000)
})

t.test('JsonMemo: a text over the whole budget is made each time, and right; 0 keeps nothing', async t => {
  for (const max of [0, 100]) {
    const budget = new TextBudget(max)
    const { read, made } = sized(budget, 1, 200)
    t.equal(read(0), read(0))
    t.equal(made(), 2, `budget ${max}: made on every read`)
    t.equal(budget.bytes, 0)
    t.equal(budget.count, 0)
  }
})

t.test('JsonMemo: a new shape replaces the text, and the bytes it is counted for', async t => {
  const budget = new TextBudget(1 << 20)
  const memo = new JsonMemo<object>(budget)
  const entry = Object.freeze({})
  const shape = {}
  memo.json(entry, shape, '', () => 'x'.repeat(1000))
  memo.json(entry, shape, '', () => 'x'.repeat(1000))
  const big = budget.bytes
  memo.json(entry, {}, '', () => 'x')
  t.equal(budget.count, 1)
  t.equal(budget.bytes, big - 999, 'the old text (1,002 characters, quoted) no longer counts; the new one (3) does')
})

t.test('one budget over several memos: the bound is on them together', async t => {
  const budget = new TextBudget(4000)
  const a = sized(budget, 50, 200)
  const b = sized(budget, 50, 200)
  for (let i = 0; i < 50; i++) {
    for (const memo of [a, b, a, b]) memo.read(i)
    t.ok(budget.bytes <= 4000, `after ${i + 1} of each`)
  }
  t.ok(budget.count >= 4 && budget.count <= 8, `${budget.count} texts of about 470 bytes`)
  const made = a.made()
  a.read(49)
  t.equal(a.made(), made, 'the most recent of a is kept')
  b.read(0)
  t.equal(b.made(), 101, 'the oldest of b was let go, and is made again')
})
