// Fields named after Object.prototype members (issue 28 item 3), on both stores: every step that
// reads a field by name (validation, defaults, auto values, normalization, readonly and auto
// keeping, merge patch, unique values, references, `_fields`, filters and sorts) reads own
// properties only, so an absent `constructor` is absent, not Object's function.
import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { assertError, build, eachStore, type Env } from '../helper.js'

const ODD = {
  name: 'odd',
  fields: {
    title: { field_type: 'string' },
    constructor: { field_type: 'string' },
    toString: { field_type: 'string', unique: true },
    valueOf: { field_type: 'integer', default: 3 },
    hasOwnProperty: { field_type: 'string', readonly: true },
    isPrototypeOf: { field_type: 'string', auto: 'uuid' },
    propertyIsEnumerable: {
      field_type: 'object',
      fields: { constructor: { field_type: 'string', default: 'nested' }, toString: { field_type: 'boolean', required: true } }
    },
    toLocaleString: { field_type: 'reference', collection: 'odd' },
    watch: { field_type: 'multiselect', options: ['a', 'b'] }
  }
}

async function setup (t: Test, env: Env): Promise<FastifyInstance> {
  const app = await build(t, env)
  const res = await app.inject({ method: 'POST', url: '/api/schemas', payload: ODD })
  t.equal(res.statusCode, 201, 'the schema is accepted', { body: res.body })
  return app
}

const slugs = (res: LightMyRequestResponse): string[] => (res.json().items as Array<{ _slug: string }>).map(i => i._slug)

eachStore(t, async (t, _store, env) => {
  t.test('create leaves them out; PATCH and PUT of another field work; readonly and auto are kept', async t => {
    const app = await setup(t, env)
    let res = await app.inject({ method: 'POST', url: '/api/content/odd', payload: { _slug: 'a', title: 'A' } })
    t.equal(res.statusCode, 201, 'a create without them is valid', { body: res.body })
    const created = res.json()
    t.equal(created.valueOf, 3, 'a default applies')
    t.type(created.isPrototypeOf, 'string', 'an auto value is generated')
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'propertyIsEnumerable', 'toLocaleString', 'watch']) {
      t.notOk(Object.hasOwn(created, name), `${name} stays absent`)
    }

    res = await app.inject({ method: 'PATCH', url: '/api/content/odd/a', payload: { title: 'B' } })
    t.equal(res.statusCode, 200, 'a PATCH of another field', { body: res.body })
    res = await app.inject({ method: 'PUT', url: '/api/content/odd/a', payload: { title: 'C' } })
    t.equal(res.statusCode, 200, 'a PUT without them', { body: res.body })
    t.equal(res.json().isPrototypeOf, created.isPrototypeOf, 'the auto value is kept by a PUT')

    res = await app.inject({ method: 'POST', url: '/api/content/odd', payload: { _slug: 'b', hasOwnProperty: 'fixed', propertyIsEnumerable: { toString: true } } })
    t.equal(res.statusCode, 201, { body: res.body })
    t.strictSame(res.json().propertyIsEnumerable, { constructor: 'nested', toString: true }, 'a nested default applies')
    res = await app.inject({ method: 'PUT', url: '/api/content/odd/b', payload: { title: 'x', propertyIsEnumerable: { toString: false } } })
    t.equal(res.json().hasOwnProperty, 'fixed', 'a readonly value is kept by a PUT')
    assertError(t, await app.inject({ method: 'PATCH', url: '/api/content/odd/b', payload: { hasOwnProperty: 'changed' } }), 422, 'VALIDATION_FAILED')
    res = await app.inject({ method: 'PATCH', url: '/api/content/odd/b', payload: { propertyIsEnumerable: { constructor: 'set' } } })
    t.equal(res.statusCode, 200)
    t.strictSame(res.json().propertyIsEnumerable, { toString: false, constructor: 'set' }, 'the merge patch keeps the nested fields it does not name')
  })

  t.test('validation, normalization, unique values and merge patch read own properties', async t => {
    const app = await setup(t, env)
    let res = await app.inject({ method: 'POST', url: '/api/content/odd', payload: { _slug: 'a', constructor: 5, propertyIsEnumerable: {} } })
    assertError(t, res, 422, 'VALIDATION_FAILED')
    t.strictSame(res.json().errors, ['constructor: must be a string', 'propertyIsEnumerable.toString: is required'])
    res = await app.inject({ method: 'POST', url: '/api/content/odd', payload: { _slug: 'a', constructor: 'c', toString: 't', watch: 'b' } })
    t.equal(res.statusCode, 201)
    t.strictSame(res.json().watch, ['b'], 'a lone multiselect value is normalized')
    res = await app.inject({ method: 'POST', url: '/api/content/odd', payload: { _slug: 'b', toString: 't' } })
    assertError(t, res, 422, 'VALIDATION_FAILED')
    t.match(res.json().errors[0], /^toString: must be unique/)
    res = await app.inject({ method: 'PATCH', url: '/api/content/odd/a', headers: { 'content-type': 'application/merge-patch+json' }, payload: { constructor: null } })
    t.equal(res.statusCode, 200)
    t.notOk(Object.hasOwn(res.json(), 'constructor'), 'null removes it')
    t.equal(res.json().toString, 't')
  })

  t.test('references, referrers and _resolve', async t => {
    const app = await setup(t, env)
    t.equal((await app.inject({ method: 'POST', url: '/api/content/odd', payload: { _slug: 'target', title: 'T' } })).statusCode, 201)
    let res = await app.inject({ method: 'POST', url: '/api/content/odd', payload: { _slug: 'r', toLocaleString: 'ghost' } })
    assertError(t, res, 422, 'VALIDATION_FAILED')
    t.strictSame(res.json().errors, ["toLocaleString: no 'odd' entry with the slug 'ghost'"])
    t.equal((await app.inject({ method: 'POST', url: '/api/content/odd', payload: { _slug: 'r', toLocaleString: 'target' } })).statusCode, 201)
    res = await app.inject({ method: 'GET', url: '/api/content/odd/target/referrers' })
    t.strictSame(res.json(), [{ collection: 'odd', slug: 'r', field: 'toLocaleString', locale: null, title: null }])
    res = await app.inject({ method: 'GET', url: '/api/content/odd/r?_resolve=toLocaleString' })
    t.equal(res.json().toLocaleString._slug, 'target')
    res = await app.inject({ method: 'GET', url: '/api/content/odd/target?_resolve=1' })
    t.notOk(Object.hasOwn(res.json(), 'toLocaleString'), 'an absent reference stays absent when resolved')
  })

  t.test('filters, sorts and _fields', async t => {
    const app = await setup(t, env)
    const entries: Array<[string, Record<string, unknown>]> = [
      ['a', { constructor: 'x', valueOf: 1 }], ['b', { constructor: 'y', propertyIsEnumerable: { constructor: 'deep', toString: true } }], ['c', {}]
    ]
    for (const [slug, extra] of entries) {
      t.equal((await app.inject({ method: 'POST', url: '/api/content/odd', payload: { _slug: slug, ...extra } })).statusCode, 201)
    }
    const list = async (query: string): Promise<LightMyRequestResponse> => await app.inject({ method: 'GET', url: `/api/content/odd?${query}` })
    t.strictSame(slugs(await list('constructor=x')), ['a'])
    t.strictSame(slugs(await list('constructor[exists]=false')), ['c'])
    t.strictSame(slugs(await list('hasOwnProperty[exists]=true')), [])
    t.strictSame(slugs(await list('valueOf[lt]=3')), ['a'])
    t.strictSame(slugs(await list('propertyIsEnumerable.constructor=deep')), ['b'])
    t.strictSame(slugs(await list('_sort=-constructor')), ['b', 'a', 'c'], 'missing values sort last descending')
    t.strictSame(slugs(await list('_sort=toString,_slug')), ['a', 'b', 'c'])
    const res = await list('_fields=constructor,propertyIsEnumerable.constructor&_sort=_slug')
    // What the list answers, with its own keys only (the parsed items have Object.prototype too).
    const own = (item: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(item).filter(([k]) => !k.startsWith('_')))
    const expected: unknown[] = JSON.parse('[{ "constructor": "x" }, { "constructor": "y", "propertyIsEnumerable": { "constructor": "deep" } }, {}]')
    t.strictSame(res.json().items.map(own), expected)
  })

  t.test('a body with a __proto__ or constructor.prototype key is a 400 in the envelope', async t => {
    const app = await setup(t, env)
    const json = { 'content-type': 'application/json' }
    assertError(t, await app.inject({ method: 'POST', url: '/api/content/odd', headers: json, payload: '{"_slug":"p","__proto__":{"title":"x"}}' }), 400, 'BAD_REQUEST')
    assertError(t, await app.inject({ method: 'POST', url: '/api/content/odd', headers: json, payload: '{"_slug":"p","constructor":{"prototype":{"x":1}}}' }), 400, 'BAD_REQUEST')
    t.equal(({} as Record<string, unknown>).title, undefined, 'Object.prototype is untouched')
  })
})
