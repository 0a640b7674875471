// Cross-backend property check: random entries (Unicode strings, numbers, booleans, dates,
// arrays, missing fields, nested objects, values of the wrong type) and random list queries
// (through the real parser); the stores given must return the same page and total, and all must
// agree with a naive reference written here from the documented semantics. property.test.ts runs
// it over the in-process stores, property-postgres.test.ts over PostgreSQL (a file each, so each
// stays within a test file's time limit on a busy machine; all are held to the one reference).
import path from 'node:path'
import fc from 'fast-check'
import type { Test } from 'tap'
import { CmsError } from '../../../lib/errors.js'
import { positionOf } from '../../../lib/query/keyset.js'
import { parseListQuery } from '../../../lib/query/parse.js'
import { fold } from '../../../lib/query/values.js'
import type { FieldRef, ListQuery } from '../../../types/query.js'
import type { ResolvedSchema } from '../../../types/schema.js'
import type { ContentStore, EntryStatus, StoredEntry } from '../../../types/store.js'
import { tempDir } from '../../helper.js'
import { allEntries, type StoreFactory } from '../../fixtures/stores.js'

const scope = { environment: 'default', locale: null }

const schemaFor = (name: string): ResolvedSchema => ({
  name,
  reusable: false,
  strict: false,
  extends: null,
  fields: {
    s: { field_type: 'string' },
    n: { field_type: 'number' },
    b: { field_type: 'boolean' },
    d: { field_type: 'datetime' },
    tags: { field_type: 'multiselect', options: ['x'] },
    nums: { field_type: 'array', items: { field_type: 'number' } },
    obj: { field_type: 'object', fields: { x: { field_type: 'string' }, y: { field_type: 'number' } } },
    j: { field_type: 'json' },
    // Declared (an undeclared name is a 400, contract §4) but held by no entry in that type always.
    zz: { field_type: 'string' }
  },
  default_sort: null,
  default_order: null
})

/** The type of the values an arbitrary generates. */
type Of<A> = A extends fc.Arbitrary<infer T> ? T : never

// ---- the reference ------------------------------------------------------------------------------

const REF_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/

/** ISO 8601 to epoch ms via Date.parse, refusing what Date.parse would roll over. */
function refInstant (text: string): number | null {
  const m = REF_DATE.exec(text)
  if (m === null) return null
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m
  const probe = new Date(0)
  probe.setUTCFullYear(Number(y), Number(mo) - 1, Number(d))
  if (probe.getUTCMonth() !== Number(mo) - 1 || probe.getUTCDate() !== Number(d) || Number(h) > 23) return null
  const offset = /^[Zz]$/.test(zone) ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`
  const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}.${(frac + '000').slice(0, 3)}${offset}`)
  return Number.isNaN(ms) ? null : ms
}

function refRaw (entry: StoredEntry, field: FieldRef): unknown {
  if (field.name === '_slug') return entry.slug
  if (field.name === '_created_at') return entry.createdAt
  if (field.name === '_updated_at') return entry.updatedAt
  let current: unknown = entry.data
  for (const segment of field.path) {
    const isObject = typeof current === 'object' && current !== null && !Array.isArray(current)
    if (!isObject || !Object.prototype.hasOwnProperty.call(current, segment)) return undefined
    current = (current as Record<string, unknown>)[segment]
  }
  return current
}

function refTyped (raw: unknown, kind: FieldRef['kind']): number | string | null {
  if (kind === 'number') return typeof raw === 'number' ? raw : null
  if (kind === 'string') return typeof raw === 'string' ? raw : null
  if (kind === 'boolean') return raw === true ? 1 : raw === false ? 0 : null
  return typeof raw === 'string' ? refInstant(raw) : null
}

/** Code point order, as UTF-8 bytes compare. */
function refCompare (a: number | string | null, b: number | string | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1
  if (typeof a === 'number' && typeof b === 'number') return Math.sign(a - b)
  return Buffer.compare(Buffer.from(String(a), 'utf8'), Buffer.from(String(b), 'utf8'))
}

function refMatches (entry: StoredEntry, query: ListQuery): boolean {
  if (query.status !== 'all' && entry.status !== query.status) return false
  for (const filter of query.filters) {
    const raw = refRaw(entry, filter.field)
    if (filter.op === 'exists') {
      if ((raw !== undefined && raw !== null) !== filter.value) return false
      continue
    }
    const want = (v: unknown): number | string => (v === true ? 1 : v === false ? 0 : v as number | string)
    const holds = (key: number | string | null): boolean => {
      if (key === null) return false
      switch (filter.op) {
        case 'eq': case 'ne': return key === want(filter.value)
        case 'in': case 'nin': return (filter.value as unknown[]).some(v => want(v) === key)
        case 'gt': return refCompare(key, want(filter.value)) > 0
        case 'gte': return refCompare(key, want(filter.value)) >= 0
        case 'lt': return refCompare(key, want(filter.value)) < 0
        case 'lte': return refCompare(key, want(filter.value)) <= 0
        case 'contains': return filter.field.array ? key === want(filter.value) : typeof key === 'string' && key.includes(filter.value as string)
        case 'starts': return typeof key === 'string' && key.startsWith(filter.value as string)
      }
      return false
    }
    const found = filter.field.array
      ? Array.isArray(raw) && raw.some(item => holds(refTyped(item, filter.field.kind)))
      : holds(refTyped(raw, filter.field.kind))
    const negated = filter.op === 'ne' || filter.op === 'nin'
    if (found === negated) return false
  }
  if (query.q !== null) {
    const leaves: string[] = []
    const walk = (v: unknown): void => {
      if (typeof v === 'string') leaves.push(v)
      else if (Array.isArray(v)) v.forEach(walk)
      else if (typeof v === 'object' && v !== null) Object.values(v).forEach(walk)
    }
    walk(entry.data)
    const needle = fold(query.q)
    if (!leaves.some(leaf => fold(leaf).includes(needle))) return false
  }
  return true
}

function reference (entries: StoredEntry[], query: ListQuery): { slugs: string[], total: number } {
  const matching = entries.filter(e => refMatches(e, query))
  matching.sort((a, b) => {
    for (const key of query.sort) {
      const c = refCompare(refTyped(refRaw(a, key.field), key.field.kind), refTyped(refRaw(b, key.field), key.field.kind))
      if (c !== 0) return key.direction === 'desc' ? -c : c
    }
    return a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0
  })
  const start = (query.page - 1) * query.perPage
  return { slugs: matching.slice(start, start + query.perPage).map(e => e.slug), total: matching.length }
}

// ---- generators -----------------------------------------------------------------------------------

// Small pools shared by the data and the query values, so equalities, prefixes and ties are
// frequent: case pairs, composed and decomposed accents, ß/SS, sigma forms, astral and
// private-use characters (UTF-16 order differs from code point order), U+0000, ligatures,
// integers beyond 2^53, date-like text.
const TEXTS = ['', 'a', 'A', 'ab', 'aB', 'b', 'é', 'e\u0301', 'É', 'ß', 'SS', 'ss', '😀', '\uE000', '\uFFFF', '𝔸', 'a\u0000b', 'ς', 'σ', 'ΣΑΣ', ' a', '1', '2024-01-01', 'İ', 'ﬁ', 'fi', '"q"', 'a.b']
const CHARS = ['a', 'b', 'A', 'é', 'ß', 'S', 'ς', 'Σ', '😀', '\uE000', '\uFFFF', ' ', '-', '0', '\u0000', 'İ', 'ﬁ']
const text = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TEXTS) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...CHARS), { maxLength: 3 }).map(a => a.join('')) }
)
const NUMBERS = [-1, 0, 1, 0.5, 1e21, 2 ** 53 + 2, 5323914579790551000, 0.1 + 0.2]
const number = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NUMBERS) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) }
)
const DATES = ['2024-01-01T00:00:00.000Z', '2024-01-01T02:00:00+02:00', '2024-01-01', '2023-12-31T23:59:59.999Z', '2024-02-29T12:00:00-05:30', '1999-12-31T23:00:00Z', '2024-02-30', '2024-01-01T00:00', '2024-01-01t00:00:00.0001z']
const dateText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...DATES) },
  { weight: 1, arbitrary: fc.date({ min: new Date('1990-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map(d => d.toISOString()) }
)
const scalar = fc.oneof(text, number, fc.boolean(), dateText, fc.constant(null))
const anyValue = fc.oneof(
  { weight: 4, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.record({ x: scalar, y: scalar }, { requiredKeys: [] }) }
)
const typed = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 3, arbitrary: arb }, { weight: 1, arbitrary: anyValue })
const dataArb = fc.record({
  s: typed(text),
  n: typed(number),
  b: typed(fc.boolean()),
  d: typed(dateText),
  tags: typed(fc.array(text, { maxLength: 3 })),
  nums: typed(fc.array(number, { maxLength: 3 })),
  obj: typed(fc.record({ x: typed(text), y: typed(number) }, { requiredKeys: [] })),
  j: typed(fc.record({ k: scalar }, { requiredKeys: [] })),
  zz: anyValue
}, { requiredKeys: [] })
const TIMES = ['2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.001Z', '2024-06-01T12:00:00.000Z']
const SLUGS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'a-1', 'b-2', 'zz', 'x9', 'abc', 'ab']
const entriesArb = fc.uniqueArray(fc.record({
  slug: fc.constantFrom(...SLUGS),
  status: fc.constantFrom<EntryStatus>('published', 'draft'),
  data: dataArb,
  created: fc.constantFrom(...TIMES),
  updated: fc.constantFrom(...TIMES)
}), { selector: e => e.slug, maxLength: SLUGS.length })

const KINDS: Record<string, 'string' | 'number' | 'boolean' | 'date'> = {
  s: 'string', n: 'number', b: 'boolean', d: 'date', tags: 'string', nums: 'number', 'obj.x': 'string', 'obj.y': 'number', j: 'string', 'j.k': 'string', zz: 'string', _slug: 'string', _created_at: 'date', _updated_at: 'date'
}
const valueText = (kind: string): fc.Arbitrary<string> => {
  switch (kind) {
    case 'number': return fc.oneof(fc.constantFrom(...NUMBERS).map(String), fc.constantFrom('1e0', '-0', '.5', '5323914579790551040'))
    case 'boolean': return fc.constantFrom('true', 'false')
    case 'date': return fc.constantFrom(...DATES.filter(d => d !== '2024-02-30'), ...TIMES)
    default: return fc.oneof(text, fc.constantFrom(...SLUGS)).filter(s => !s.includes(','))
  }
}
const filterArb = fc.constantFrom(...Object.keys(KINDS)).chain(field => {
  const kind = KINDS[field] as string
  const ops = ['=', 'eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists', ...(kind === 'string' ? ['contains', 'starts'] : []), ...(field === 'nums' ? ['contains'] : [])]
  return fc.constantFrom(...ops).chain(op => {
    const value = op === 'exists'
      ? fc.constantFrom('true', 'false')
      : op === 'in' || op === 'nin'
        ? fc.array(valueText(kind), { minLength: 1, maxLength: 3 }).map(v => v.join(','))
        : valueText(kind)
    return value.map(v => [op === '=' ? field : `${field}[${op}]`, v] as const)
  })
})
const SORTABLE = ['s', 'n', 'b', 'd', 'obj.x', 'obj.y', 'j', 'j.k', 'zz', '_slug', '_created_at', '_updated_at']
const queryArb = fc.record({
  // Mostly few conditions and the first page, so that most pages hold entries to compare.
  filters: fc.oneof(
    { weight: 2, arbitrary: fc.constant([]) },
    { weight: 3, arbitrary: fc.array(filterArb, { minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: fc.array(filterArb, { minLength: 2, maxLength: 3 }) }
  ),
  sort: fc.array(fc.tuple(fc.boolean(), fc.constantFrom(...SORTABLE)).map(([desc, f]) => (desc ? '-' : '') + f), { maxLength: 3 }),
  order: fc.constantFrom(undefined, 'asc', 'desc'),
  status: fc.constantFrom(undefined, undefined, 'published', 'draft', 'all'),
  q: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: text.filter(s => s.trim() !== '' && !s.includes('\u0000')) }),
  page: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 3 }) }),
  perPage: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.constant(20)),
  seesDrafts: fc.boolean()
})

function toQuery (schema: ResolvedSchema, g: Of<typeof queryArb>): ListQuery | null {
  const raw: Record<string, unknown> = { _page: String(g.page), _per_page: String(g.perPage) }
  for (const [key, value] of g.filters) {
    const existing = raw[key]
    raw[key] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value]
  }
  if (g.sort.length > 0) raw._sort = g.sort.join(',')
  if (g.order !== undefined) raw._order = g.order
  if (g.status !== undefined) raw._status = g.status
  if (g.q !== undefined) raw._q = g.q
  try {
    return parseListQuery(raw, schema, { seesDrafts: g.seesDrafts })
  } catch (err) {
    if (err instanceof CmsError && err.code === 'BAD_REQUEST') return null
    throw err
  }
}

// Edge cases that must always run, whatever the random draw.
type Generated = [Of<typeof entriesArb>, Array<Of<typeof queryArb>>, boolean]
const entry = (slug: string, data: Record<string, unknown>, status: EntryStatus = 'published', created = TIMES[0] as string): Of<typeof entriesArb>[number] =>
  ({ slug, status, data, created, updated: TIMES[1] as string })
const query = (filters: Array<readonly [string, string]>, sort: string[] = [], over: Partial<Of<typeof queryArb>> = {}): Of<typeof queryArb> =>
  ({ filters, sort, order: undefined, status: undefined, q: undefined, page: 1, perPage: 20, seesDrafts: true, ...over } as Of<typeof queryArb>)
const EXAMPLES: Generated[] = [[
  [
    entry('a', { n: 5323914579790551000, s: '\uE000', d: '2024-01-01T02:00:00+02:00', tags: ['x', 'y'], obj: { x: 'a\u0000b' } }),
    entry('b', { n: 5323914579790551040, s: '😀', d: '2024-01-01T00:00:00Z', tags: 'x', obj: null, j: { k: 'ΣΑΣ' } }, 'draft'),
    entry('c', { n: '5323914579790551000', s: '\uFFFF', d: '2024-01-01', nums: [1, 2, 3], obj: { y: 1e21 }, zz: true }),
    entry('d', { n: true, s: 'ß', d: 'not a date', nums: [], j: 'σας' }),
    entry('e', { n: -0, s: null, tags: [], zz: [1, 'a'] })
  ],
  [
    query([['n', '5323914579790551000']]),
    query([['n[gte]', '5323914579790551040']], ['-n']),
    query([['n[ne]', '0']], ['n']),
    query([['n[in]', '0,1']]),
    query([['s[gt]', '\uE000']], ['s']),
    query([], ['-s']),
    query([['d', '2024-01-01']], ['d']),
    query([['d[lt]', '2024-01-01T00:00:00.001Z']], ['-d']),
    query([['tags', 'x']]),
    query([['tags[nin]', 'y']]),
    query([['nums[gt]', '2']]),
    query([['obj.x[contains]', '\u0000']]),
    query([['obj.x[starts]', 'a\u0000']]),
    query([['obj[exists]' as string, 'true']]),
    query([['obj.y[exists]', 'false']]),
    query([['zz[exists]', 'true']], ['zz']),
    query([], ['j.k', '-_created_at'], { q: 'σ' }),
    query([], [], { q: 'SS' }),
    query([['b', 'true']], [], { status: 'draft' })
  ],
  true
]]

// ---- the property ---------------------------------------------------------------------------------

/** The property, over stores made by `factories`. */
export async function checkAgainstReference (t: Test, factories: readonly StoreFactory[]): Promise<void> {
  const dir = tempDir(t)
  let clockValue = TIMES[0] as string
  const clock = (): Date => new Date(clockValue)
  const stores: ContentStore[] = factories.map(factory => factory.create({ dataDir: path.join(dir, factory.name), clock }))
  for (const store of stores) await store.open()
  t.teardown(async () => { for (const store of stores) await store.close() })

  let run = 0
  let compared = 0
  let ordered = 0
  await fc.assert(fc.asyncProperty(entriesArb, fc.array(queryArb, { minLength: 1, maxLength: 6 }), fc.boolean(), async (entries, queries, indexed) => {
    const collection = `c${run++}`
    const schema = schemaFor(collection)
    if (indexed) for (const store of stores) await store.prepareCollection({ ...schema, default_sort: 's', fields: { ...schema.fields, s: { field_type: 'string', unique: true } } })
    for (const e of entries) {
      clockValue = e.created
      await Promise.all(stores.map(store => store.create(scope, collection, { slug: e.slug, status: e.status, data: e.data as Record<string, unknown> })))
    }
    const check = async (label: string): Promise<void> => {
      const stored = (await allEntries(stores[0] as ContentStore)).filter(l => l.collection === collection).map(l => l.entry)
      // Single reads (cached by the SQLite store) agree too, deleted entries included.
      for (const e of entries) {
        const expected = JSON.stringify(stored.find(x => x.slug === e.slug))
        for (const store of stores) {
          if (JSON.stringify(await store.get(scope, collection, e.slug)) !== expected) throw new Error(`${label}: ${store.kind} get(${e.slug}) differs`)
        }
      }
      for (const g of queries) {
        const query = toQuery(schema, g)
        if (query === null) continue
        const expected = reference(stored, query)
        // Four times: a repeated query is answered from materialized results (SQLite) and
        // kept orders, match lists and counts (file store); all must agree.
        for (const store of [...stores, ...stores, ...stores, ...stores]) {
          const got = await store.list(scope, collection, query)
          const slugs = got.items.map(e => e.slug)
          if (got.total !== expected.total || JSON.stringify(slugs) !== JSON.stringify(expected.slugs)) {
            throw new Error(`${label}: ${store.kind} store disagrees with the reference for ${JSON.stringify(query)}\n` +
              `  expected ${expected.total} ${JSON.stringify(expected.slugs)}\n  got      ${got.total} ${JSON.stringify(slugs)}`)
          }
          // Items are whole entries, equal on both stores.
          for (const item of got.items) {
            if (JSON.stringify(item) !== JSON.stringify(stored.find(e => e.slug === item.slug))) throw new Error(`${store.kind}: item ${item.slug} differs`)
          }
        }
        await checkKeyset(label, query, stored, expected.slugs)
        compared++
        if (expected.slugs.length >= 2) ordered++
      }
    }
    // Keyset paging (contract §10): the page after this one's last item is the next numbered page.
    const checkKeyset = async (label: string, query: ListQuery, stored: StoredEntry[], slugs: string[]): Promise<void> => {
      const last = stored.find(e => e.slug === slugs.at(-1))
      if (last === undefined) return
      const next = reference(stored, { ...query, page: query.page + 1 })
      const more = reference(stored, { ...query, page: 1, perPage: (query.page + 1) * query.perPage + 1 }).slugs.length > (query.page + 1) * query.perPage
      for (const store of [...stores, ...stores]) {
        const got = await store.list(scope, collection, { ...query, page: 1, after: positionOf(last, query.sort) })
        const gotSlugs = got.items.map(e => e.slug)
        if (JSON.stringify(gotSlugs) !== JSON.stringify(next.slugs) || got.more !== more || got.total !== next.total) {
          throw new Error(`${label}: ${store.kind} keyset page after ${last.slug} for ${JSON.stringify(query)}\n` +
            `  expected ${JSON.stringify(next.slugs)} more ${String(more)}\n  got      ${JSON.stringify(gotSlugs)} more ${String(got.more)}`)
        }
      }
    }
    await check('after create')
    // Writes must refresh every cached count and order: update half, delete a third, re-check.
    for (const [i, e] of entries.entries()) {
      clockValue = e.updated
      if (i % 3 === 1) {
        await Promise.all(stores.map(store => store.delete(scope, collection, e.slug)))
      } else if (i % 2 === 0) {
        const data = { ...e.data as Record<string, unknown>, s: `${String(i)}${typeof e.data.s === 'string' ? e.data.s : ''}` }
        await Promise.all(stores.map(store => store.update(scope, collection, { slug: e.slug, status: i % 4 === 0 ? 'draft' : 'published', data })))
      }
    }
    await check('after updates')
    // Done with this collection: its indexes go (prepareCollection drops what a schema no longer
    // asks for), so later runs are not planned against hundreds of other collections' partial
    // indexes (PostgreSQL's planner considers every index of the table).
    if (indexed) for (const store of stores) await store.prepareCollection({ ...schema, fields: {}, default_sort: null })
  }), {
    numRuns: 200,
    examples: EXAMPLES,
    ...(process.env.PROPERTY_SEED === undefined ? {} : { seed: Number(process.env.PROPERTY_SEED) })
  })
  t.ok(compared > 200, `compared ${compared} queries on every store`)
  t.ok(ordered > 100, `${ordered} of them returned two or more entries`)
}
