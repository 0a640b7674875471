// The JSON nesting limit (issue 28 item 1, "Depth and size limits"), on both stores: a body nested
// deeper than MAX_JSON_DEPTH is a 400 BAD_REQUEST on every route that takes JSON, before it is
// parsed; a body at the limit is stored, read, indexed and filtered like any other.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { assertError, build, eachStore } from '../helper.js'
import { MAX_JSON_DEPTH } from '../../lib/json-depth.js'

const DEEP_SCHEMA = {
  name: 'deep',
  fields: { title: { field_type: 'string', unique: true }, blob: { field_type: 'json' } }
}

/** A JSON value of `levels` nested arrays around a string. */
const nested = (levels: number): unknown => {
  let value: unknown = 'core'
  for (let i = 0; i < levels; i++) value = [value]
  return value
}

/** A body whose own object is one level: `blob` adds `levels - 1`. */
const entryAtDepth = (slug: string, levels: number): Record<string, unknown> => ({ _slug: slug, title: slug, blob: nested(levels - 1) })

async function setup (env: Record<string, string>, t: Parameters<Parameters<typeof eachStore>[1]>[0]): Promise<FastifyInstance> {
  const app = await build(t, env)
  const res = await app.inject({ method: 'POST', url: '/api/schemas', payload: DEEP_SCHEMA })
  t.equal(res.statusCode, 201, 'the schema is accepted', { body: res.body })
  return app
}

eachStore(t, async (t, _store, env) => {
  t.test('a body at the limit is stored, read back and filtered', async t => {
    const app = await setup(env, t)
    let res = await app.inject({ method: 'POST', url: '/api/content/deep', payload: entryAtDepth('edge', MAX_JSON_DEPTH) })
    t.equal(res.statusCode, 201, 'accepted', { body: res.body.slice(0, 300) })
    res = await app.inject({ method: 'GET', url: '/api/content/deep/edge' })
    t.strictSame(res.json().blob, nested(MAX_JSON_DEPTH - 1), 'read back whole')
    res = await app.inject({ method: 'GET', url: '/api/content/deep?title=edge' })
    t.equal(res.json().total, 1, 'a filter on the collection answers')
    // Brackets and escaped quotes inside strings are text, not nesting.
    const text = '"\\' + '['.repeat(500) + '{'.repeat(500) + '\\"['
    res = await app.inject({ method: 'POST', url: '/api/content/deep', payload: { _slug: 'text', title: text } })
    t.equal(res.statusCode, 201, 'brackets in strings do not count')
    t.equal((await app.inject({ method: 'GET', url: '/api/content/deep/text' })).json().title, text)
  })

  t.test('a body one level deeper is a 400 on every route that takes JSON', async t => {
    const app = await setup(env, t)
    t.equal((await app.inject({ method: 'POST', url: '/api/content/deep', payload: entryAtDepth('there', 2) })).statusCode, 201)
    const tooDeep = entryAtDepth('x', MAX_JSON_DEPTH + 1)
    const requests = [
      { method: 'POST', url: '/api/content/deep', payload: tooDeep },
      { method: 'PUT', url: '/api/content/deep/there', payload: tooDeep },
      { method: 'PATCH', url: '/api/content/deep/there', payload: { blob: nested(MAX_JSON_DEPTH) } },
      { method: 'PATCH', url: '/api/content/deep/there', payload: JSON.stringify({ blob: nested(MAX_JSON_DEPTH) }), headers: { 'content-type': 'application/merge-patch+json' } },
      { method: 'POST', url: '/api/schemas', payload: { ...DEEP_SCHEMA, name: 'other', fields: { a: { field_type: 'json', default: nested(MAX_JSON_DEPTH) } } } },
      { method: 'PUT', url: '/api/schemas/deep', payload: { ...DEEP_SCHEMA, label: nested(MAX_JSON_DEPTH) } },
      { method: 'POST', url: '/api/transform/cache/invalidate', payload: { path: nested(MAX_JSON_DEPTH) } }
    ] as const
    for (const request of requests) {
      const res = await app.inject(request)
      t.test(`${request.method} ${request.url} ${'headers' in request ? 'merge patch' : 'json'}`, async t => {
        assertError(t, res, 400, 'BAD_REQUEST')
        t.match(res.json().message, /deeper than 64 levels/)
      })
    }
    t.strictSame((await app.inject({ method: 'GET', url: '/api/content/deep/there' })).json().blob, nested(1), 'nothing was changed')
    t.equal((await app.inject({ method: 'GET', url: '/api/schemas/other' })).statusCode, 404, 'no schema was written')
  })

  t.test('a hostile body nested 400,000 deep (under the body limit) is refused at once', async t => {
    const app = await setup(env, t)
    const levels = 400_000
    const payload = '{"_slug":"x","blob":' + '['.repeat(levels) + ']'.repeat(levels) + '}'
    const started = performance.now()
    const res = await app.inject({ method: 'POST', url: '/api/content/deep', payload, headers: { 'content-type': 'application/json' } })
    assertError(t, res, 400, 'BAD_REQUEST')
    t.ok(performance.now() - started < 1000, 'in well under a second')
    t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200, 'the server still answers')
  })
})
