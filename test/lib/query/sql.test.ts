// lib/query/sql.ts: values only ever as bound parameters, field names never as raw SQL, and
// keys of any shape still found (checked against every store).
import path from 'node:path'
import t from 'tap'
import { parseListQuery } from '../../../lib/query/parse.js'
import { afterSegments, conditionsSql, indexKeySql, jsonPath, orderSql, sqlBuilder } from '../../../lib/query/sql.js'
import { postgresDialect } from '../../../lib/query/postgres-dialect.js'
import type { ResolvedSchema } from '../../../types/schema.js'
import { tempDir } from '../../helper.js'
import { storeFactories } from '../../fixtures/stores.js'

const loose: ResolvedSchema = {
  name: 'posts',
  reusable: false,
  strict: false,
  extends: null,
  fields: {
    title: { field_type: 'string' },
    views: { field_type: 'integer' },
    tags: { field_type: 'multiselect', options: ['a'] },
    // Names of any shape, declared (an undeclared name is a 400, contract §4): they reach the SQL as bound paths.
    ...Object.fromEntries(["it's", 'a"b', 'a b', "x') OR 1=1 --", 'ünï', '0'].map(name => [name, { field_type: 'string' as const }])),
    nested: { field_type: 'object', fields: { 'k"': { field_type: 'string' } } }
  }
}
const sqlOf = (raw: Record<string, unknown>): { sql: string, params: unknown[] } => {
  const query = parseListQuery(raw, loose, { seesDrafts: true })
  const params: unknown[] = []
  const sql = [...conditionsSql(query, params), orderSql(query.sort, params)].join(' | ')
  return { sql, params }
}

t.test('values are bound, never written into the SQL', async t => {
  const evil = "x'); DROP TABLE entries; --"
  for (const raw of [{ title: evil }, { 'title[contains]': evil }, { 'title[starts]': evil }, { 'title[in]': `${evil},b` }, { 'tags[nin]': evil }, { _q: evil }, { 'views[gt]': '1' }]) {
    const { sql, params } = sqlOf(raw)
    t.notMatch(sql, /DROP|x'\)/, `no value in the SQL text: ${Object.keys(raw)[0] ?? ''}`)
    t.ok(params.length > 0, 'the value travels as a parameter')
    t.equal((sql.match(/\?/g) ?? []).length, params.length, 'one parameter per placeholder')
  }
})

t.test('field paths: identifiers inline (indexable), anything else bound', async t => {
  t.equal(jsonPath(['seo', 'title']), '$.seo.title')
  t.equal(jsonPath(['a b', 'x"y', 'ok-1']), '$."a b"."x\\"y".ok-1')
  const plain = sqlOf({ title: 'x' })
  t.match(plain.sql, /'\$\.title'/)
  t.same(plain.params, ['x'])
  for (const name of ["it's", 'a"b', 'a b', "x') OR 1=1 --", 'ünï', '0']) {
    const { sql, params } = sqlOf({ [name]: 'v', _sort: name })
    t.notOk(sql.includes(name), `${JSON.stringify(name)} is not in the SQL text`)
    t.ok(params.includes(jsonPath([name])), 'its JSON path is a parameter')
    t.equal((sql.match(/\?/g) ?? []).length, params.length)
  }
  t.equal(indexKeySql(['a b'], 'string'), null, 'only identifier paths get indexes')
  t.match(indexKeySql(['title'], 'string'), /^CASE WHEN json_type\(data, '\$\.title'\) = 'text'/)
})

t.test('the PostgreSQL dialect: values and odd paths bound, identifier paths inline, nulls ordered as SQLite orders them', async t => {
  const pg = sqlBuilder(postgresDialect)
  const evil = "x'); DROP TABLE entries; --"
  for (const raw of [{ title: evil }, { 'title[contains]': evil }, { 'title[starts]': evil }, { 'tags[nin]': evil }, { _q: evil }, { "it's": evil, _sort: 'a b' }]) {
    const query = parseListQuery(raw, loose, { seesDrafts: true })
    const params: unknown[] = []
    const sql = [...pg.conditionsSql(query, params), pg.orderSql(query.sort, params)].join(' | ')
    t.notMatch(sql, /DROP|x'\)|it's|a b/, `no value or odd name in the SQL text: ${Object.keys(raw)[0] ?? ''}`)
    t.equal((sql.match(/\?/g) ?? []).length, params.length, 'one parameter per placeholder')
  }
  t.equal(pg.indexKeySql(['seo', 'title'], 'string'), 'CASE WHEN jsonb_typeof((data #> \'{seo,title}\')) = \'string\' THEN ((data #> \'{seo,title}\') #>> \'{}\') COLLATE "C" END')
  t.equal(pg.indexKeySql(['0'], 'number'), null, 'a number segment is never written (#> would index an array with it)')
  const sort = parseListQuery({ _sort: '-views,title' }, loose, { seesDrafts: true }).sort
  t.match(pg.orderSql(sort, []), /DESC NULLS LAST, .* ASC NULLS FIRST, slug ASC$/)
})

t.test('keyset segments: a range on the first sort key, values bound, no value in its own segment', async t => {
  const sortOf = (raw: string): ReturnType<typeof parseListQuery>['sort'] => parseListQuery({ _sort: raw }, loose, { seesDrafts: true }).sort
  const check = (raw: string, keys: Array<number | string | null>, shapes: RegExp[]): void => {
    const segments = afterSegments(sortOf(raw), { keys, slug: "it's" })
    t.equal(segments.length, shapes.length, `${raw} after ${JSON.stringify(keys)}: ${shapes.length} segment(s)`)
    segments.forEach((segment, i) => {
      t.match(segment.sql, shapes[i] as RegExp)
      t.equal((segment.sql.match(/\?/g) ?? []).length, segment.params.length, 'one parameter per placeholder')
      t.notOk(segment.sql.includes("it's"), 'the slug is bound')
    })
  }
  check('', [], [/^slug > \?$/])
  check('views', [3], [/>= \? AND \(.* > \? OR slug > \?\)$/])
  check('-views', [3], [/<= \? AND \(.* < \? OR slug > \?\)$/, /IS NULL$/])
  check('views', [null], [/IS NULL AND slug > \?$/, /IS NOT NULL$/])
  check('-views', [null], [/IS NULL AND slug > \?$/])
  check('-_created_at,title', [Date.UTC(2024, 0, 1), 'x'], [/^created_at <= \? AND \(created_at < \? OR \(.*\)\)$/, /^created_at IS NULL$/])
  const [segment] = afterSegments(sortOf('_created_at'), { keys: [Date.UTC(2024, 0, 1)], slug: 'a' })
  t.same(segment?.params, ['2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z', 'a'], 'a timestamp column is compared as its ISO text')
})

for (const factory of storeFactories) {
  t.test(`store=${factory.name}: keys of any shape are found`, async t => {
    const store = factory.create({ dataDir: path.join(tempDir(t), 'data') })
    await store.open()
    t.teardown(() => store.close())
    const scope = { environment: 'default', locale: null }
    const odd = { "it's": 'q', 'a"b': 'dq', 'a b': 'sp', 'x.y': 'dot', ünï: 'u', '[0]': 'br', nested: { 'k"': 'n' } }
    await store.create(scope, 'posts', { slug: 'odd', status: 'published', data: odd })
    await store.create(scope, 'posts', { slug: 'plain', status: 'published', data: { title: 'p' } })
    const find = async (raw: Record<string, unknown>): Promise<string[]> =>
      (await store.list(scope, 'posts', parseListQuery(raw, loose, { seesDrafts: true }))).items.map(e => e.slug)
    for (const key of ["it's", 'a"b', 'a b', 'ünï']) t.same(await find({ [key]: odd[key as keyof typeof odd] }), ['odd'], `key ${JSON.stringify(key)}`)
    t.same(await find({ 'nested.k"': 'n' }), ['odd'])
    t.same(await find({ "it's[exists]": 'false' }), ['plain'])
    t.same(await find({ _sort: '-a b' }), ['odd', 'plain'])
    t.same(await find({ title: "p' OR '1'='1" }), [])
    t.equal(await store.findByValue(scope, 'posts', 'a"b', 'dq', null), 'odd')
  })
}
