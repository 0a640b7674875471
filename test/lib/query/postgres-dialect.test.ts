// lib/query/postgres-dialect.ts and the SQL functions of lib/store/postgres-schema.ts, checked
// against their JavaScript originals on a real server: lectern_instant against values.ts
// `instant`, and the text encoding JSONB needs (order, equality, substrings) against code points.
import path from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import pg from 'pg'
import { jsonbText, numbered, pgText } from '../../../lib/query/postgres-dialect.js'
import { compareText, instant } from '../../../lib/query/values.js'
import { PostgresStore } from '../../../lib/store/postgres.js'
import { tempDir } from '../../helper.js'
import { postgresUrl } from '../../fixtures/postgres.js'

/** PostgreSQL text cannot hold U+0000 (and a date never does). */
const withoutNul = (text: string): string => text.split('\u0000').join('')

t.test('numbered: `?` become $1, $2…, one per parameter', async t => {
  t.equal(numbered('a = ? AND b IN (?, ?)', [1, 2, 3]), 'a = $1 AND b IN ($2, $3)')
  t.throws(() => numbered('a = ?', []), /1 placeholders for 0 parameters/)
})

t.test('jsonbText: the JSON text itself, unless a string holds what JSONB refuses', async t => {
  const json = JSON.stringify({ a: 'plain', b: [1, 'ü😀'] })
  t.equal(jsonbText(JSON.parse(json), json), json)
  const odd = { 'k\u0000': ['a\u0000', '\uDC00'], n: 1 }
  t.same(JSON.parse(jsonbText(odd, JSON.stringify(odd))), { 'k\u0001\u0001': ['a\u0001\u0001', '\uFFFD'], n: 1 })
})

t.test('postgres functions against their originals', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const url = await postgresUrl(t, path.resolve(dataDir))
  // The store's migration makes the functions.
  const store = new PostgresStore({ dataDir, databaseUrl: url })
  await store.open()
  await store.close()
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.teardown(() => client.end())

  t.test('lectern_instant is values.ts instant', async t => {
    const digits = (n: number): fc.Arbitrary<string> => fc.array(fc.constantFrom(...'0123456789'), { minLength: n, maxLength: n }).map(d => d.join(''))
    const pick = <T>(...values: T[]): fc.Arbitrary<T> => fc.constantFrom(...values)
    const dateLike = fc.tuple(
      fc.oneof(digits(4), pick('2024', '2000', '1900', '0000', '9999')), pick('-'),
      fc.oneof({ weight: 1, arbitrary: digits(2) }, { weight: 4, arbitrary: pick('01', '02', '04', '12', '13', '00') }), pick('-'),
      fc.oneof({ weight: 1, arbitrary: digits(2) }, { weight: 4, arbitrary: pick('01', '15', '28', '29', '30', '31', '00') }),
      fc.option(fc.tuple(pick('T', 't', ' ', 'x'), digits(2), pick(':'), digits(2),
        fc.option(fc.tuple(pick(':'), digits(2), fc.option(fc.tuple(pick('.', ','), fc.oneof(digits(1), digits(3), digits(7))).map(p => p.join('')))).map(p => p.filter(x => x !== null).join(''))),
        fc.option(pick('Z', 'z', '+02:00', '-05:30', '+0200', '+24:00', '-00:60', '+1'))).map(p => p.filter(x => x !== null).join('')))
    ).map(p => p.filter(x => x !== null).join(''))
    // Real instants (years 0000–9999) in each accepted form: date only, minutes, seconds, fractions, offsets.
    const real = fc.tuple(fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
      pick(10, 16, 19, 23), pick('', 'Z', 'z', '+05:30', '-11:00', '+0100'), pick('T', 't', ' '))
      .map(([date, length, zone, separator]) => date.toISOString().slice(0, length).replace('T', separator) + (length > 10 ? zone : ''))
    const texts = fc.sample(fc.oneof({ weight: 3, arbitrary: real }, { weight: 3, arbitrary: dateLike }, { weight: 1, arbitrary: fc.string({ maxLength: 30 }) }), 6000)
    texts.push('2024-02-29', '2023-02-29', '2000-02-29', '1900-02-29', '2024-01-01T23:59:59.999Z', '2024-01-01T24:00', '0000-01-01', '0000-03-01T00:00+23:59', 'x'.repeat(70), '2024-01-01T00:00:00.' + '1'.repeat(60))
    const { rows } = await client.query('SELECT lectern_instant(x) AS ms FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i', [texts.map(withoutNul)])
    let dates = 0
    let differ = 0
    texts.forEach((text, i) => {
      const expected = instant(withoutNul(text))
      if (expected !== null) dates++
      if ((rows[i] as { ms: number | null }).ms !== expected) {
        differ++
        if (differ < 5) t.fail(`${JSON.stringify(text)}: ${String((rows[i] as { ms: number | null }).ms)}, expected ${String(expected)}`)
      }
    })
    t.equal(differ, 0, `${texts.length} texts, ${dates} of them dates: the same instant or none`)
    t.ok(dates > 1000, 'most of them dates')
  })

  t.test('encoded text keeps code point order, equality and substrings', async t => {
    const text = fc.array(fc.constantFrom('\u0000', '\u0001', '\u0002', 'a', 'b', 'é', '😀', '\uE000', '\uFFFF'), { maxLength: 5 }).map(c => c.join(''))
    const pairs = fc.sample(fc.tuple(text, text), 3000)
    const { rows } = await client.query(`SELECT (a COLLATE "C" < b) AS lt, a = b AS eq, lectern_contains(a, b) AS has
      FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(a, b, i) ORDER BY i`, [pairs.map(p => pgText(p[0])), pairs.map(p => pgText(p[1]))])
    let wrong = 0
    pairs.forEach(([a, b], i) => {
      const row = rows[i] as { lt: boolean, eq: boolean, has: boolean }
      if (row.lt !== (compareText(a, b) < 0) || row.eq !== (a === b) || row.has !== a.includes(b)) {
        wrong++
        if (wrong < 5) t.fail(`${JSON.stringify(a)} vs ${JSON.stringify(b)}: ${JSON.stringify(row)}`)
      }
    })
    t.equal(wrong, 0, `${pairs.length} pairs compare as their code points do`)
  })
})
