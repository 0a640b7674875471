// The value semantics shared by both stores (lib/query/values.ts).
import t from 'tap'
import { compareKeys, compareText, deepFreeze, fold, instant, prefixUpperBound, searchText, typedKey, valueAtPath } from '../../../lib/query/values.js'

t.test('instant: ISO 8601 dates and date-times as epoch milliseconds', async t => {
  t.equal(instant('2024-01-01'), Date.UTC(2024, 0, 1), 'a date is midnight UTC')
  t.equal(instant('2024-01-01T10:00:00Z'), Date.UTC(2024, 0, 1, 10))
  t.equal(instant('2024-01-01T12:00:00+02:00'), Date.UTC(2024, 0, 1, 10), 'offsets are applied')
  t.equal(instant('2024-01-01T04:30:00-05:30'), Date.UTC(2024, 0, 1, 10))
  t.equal(instant('2024-01-01T12:00:00+0200'), Date.UTC(2024, 0, 1, 10), 'offset without colon')
  t.equal(instant('2024-01-01T10:00'), Date.UTC(2024, 0, 1, 10), 'no seconds, no offset: UTC')
  t.equal(instant('2024-01-01 10:00:00.5z'), Date.UTC(2024, 0, 1, 10, 0, 0, 500), 'space separator, lowercase zone')
  t.equal(instant('2024-01-01T10:00:00.123456789Z'), Date.UTC(2024, 0, 1, 10, 0, 0, 123), 'below a millisecond is dropped')
  t.equal(instant('2024-02-29'), Date.UTC(2024, 1, 29), 'leap day')
  t.equal(instant('2000-02-29'), Date.UTC(2000, 1, 29))
  t.equal(instant('0001-01-01'), -62135596800000, 'years below 100 are not shifted to 19xx')
  t.equal(instant('2024-01-01T00:00:00.000Z'), instant('2023-12-31T19:00:00-05:00'))
  for (const bad of ['2023-02-29', '1900-02-29', '2024-02-30', '2024-13-01', '2024-00-10', '2024-01-00', '2024-01-01T24:00:00Z', '2024-01-01T10:60:00Z',
    '2024-01-01T10:00:60Z', '2024-01-01T10:00:00+24:00', '2024-1-1', '24-01-01', 'yesterday', '', '2024-01-01T10', '2024-01-01Z', ' 2024-01-01', '2024-01-01T10:00:00Z ']) {
    t.equal(instant(bad), null, `not an instant: ${JSON.stringify(bad)}`)
  }
})

t.test('compareText: Unicode code point order (SQLite BINARY on UTF-8)', async t => {
  t.equal(compareText('a', 'b'), -1)
  t.equal(compareText('B', 'a'), -1, 'case-sensitive: uppercase first')
  t.equal(compareText('ab', 'a'), 1, 'a prefix sorts first')
  t.equal(compareText('', ''), 0)
  t.equal(compareText('\uFFFF', '😀'), -1, 'U+FFFF before U+1F600, though its UTF-16 unit is larger')
  t.equal(compareText('\uE000', '𝔸'), -1)
  t.equal(compareText('😀', '😁'), -1)
  t.equal(compareText('a\u0000b', 'a'), 1)
  const sorted = ['😀', '\uFFFF', 'z', 'é', '\uE000', 'A', 'a'].sort(compareText)
  t.same(sorted, ['A', 'a', 'z', 'é', '\uE000', '\uFFFF', '😀'])
  t.same(sorted.map(s => Buffer.from(s)), [...sorted].map(s => Buffer.from(s)).sort(Buffer.compare), 'the same as UTF-8 byte order')
})

t.test('compareKeys: no value first, then by type', async t => {
  t.equal(compareKeys(null, 0), -1)
  t.equal(compareKeys(null, null), 0)
  t.equal(compareKeys(2, 10), -1)
  t.equal(compareKeys('10', '2'), -1, 'text compares as text')
  t.equal(compareKeys(1, 'a'), -1, 'numbers before text, as in SQLite')
})

t.test('typedKey and valueAtPath', async t => {
  t.equal(typedKey(5, 'number'), 5)
  t.equal(typedKey('5', 'number'), null)
  t.equal(typedKey(true, 'boolean'), 1)
  t.equal(typedKey(false, 'boolean'), 0)
  t.equal(typedKey(1, 'boolean'), null)
  t.equal(typedKey('x', 'string'), 'x')
  t.equal(typedKey(['x'], 'string'), null)
  t.equal(typedKey('2024-01-01', 'date'), Date.UTC(2024, 0, 1))
  t.equal(typedKey('soon', 'date'), null)
  t.equal(typedKey(undefined, 'string'), null)
  const data = JSON.parse('{"a":{"b":[1,{"c":2}],"__proto__":{"x":1}},"n":null}')
  t.same(valueAtPath(data, ['a', 'b']), [1, { c: 2 }])
  t.equal(valueAtPath(data, ['a', 'b', '0']), undefined, 'never into arrays')
  t.equal(valueAtPath(data, ['a', 'b', '1', 'c']), undefined)
  t.same(valueAtPath(data, ['a', '__proto__']), { x: 1 }, 'an own __proto__ key is data')
  t.equal(valueAtPath({}, ['constructor']), undefined, 'never the prototype')
  t.equal(valueAtPath({}, ['toString']), undefined)
  t.equal(valueAtPath(data, ['n', 'x']), undefined)
  t.equal(valueAtPath(data, []), data)
})

t.test('fold: case-insensitive and Unicode-aware', async t => {
  t.equal(fold('Hello WORLD'), 'hello world')
  t.equal(fold('Straße'), fold('STRASSE'), 'ß matches SS')
  t.equal(fold('ΟΔΟΣ'), fold('οδοσ'), 'final sigma')
  t.ok(fold('ΟΔΟΣ ΟΔΟΣ').includes(fold('οσ ο')))
  t.equal(fold('Cafe\u0301'), fold('CAFÉ'), 'decomposed and composed accents')
  t.equal(fold('ﬁne'), 'fine', 'ligatures')
  t.equal(fold('ＡＢＣ'), 'abc', 'full-width forms')
  t.not(fold('cafe'), fold('café'), 'accents still count')
})

t.test('searchText: every string value at any depth, folded', async t => {
  const text = searchText({ title: 'Hello', n: 5, tags: ['Ünïcode', 7, { deep: 'DEEP' }], nested: { a: { b: 'X' } }, keyOnly: null, b: true })
  t.same(text.split('\u0000'), ['hello', fold('Ünïcode'), 'deep', 'x'])
  t.equal(searchText({}), '')
})

t.test('prefixUpperBound', async t => {
  t.equal(prefixUpperBound('abc'), 'abd')
  t.equal(prefixUpperBound(''), null)
  t.equal(prefixUpperBound('a\u{10FFFF}'), 'b', 'carries past the last code point')
  t.equal(prefixUpperBound('\u{10FFFF}'), null)
  t.equal(prefixUpperBound('a\uD7FF'), 'a\uE000', 'skips the surrogate range')
  t.equal(prefixUpperBound('😀'), '😁')
  for (const [prefix, s] of [['ab', 'abz'], ['ab', 'ab'], ['a\uD7FF', 'a\uD7FF\uFFFF'], ['😀', '😀😀']]) {
    const bound = prefixUpperBound(prefix as string) as string
    t.ok(compareText(prefix as string, s as string) <= 0 && compareText(s as string, bound) < 0, `${JSON.stringify(s)} in range of ${JSON.stringify(prefix)}`)
  }
})

t.test('deepFreeze', async t => {
  const value = deepFreeze({ a: [{ b: 1 }], c: { d: 'x' } })
  t.ok(Object.isFrozen(value.a[0]) && Object.isFrozen(value.c))
  t.equal(deepFreeze(null), null)
})
