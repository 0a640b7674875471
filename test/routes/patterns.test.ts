// Schema patterns through the API (issue 28 item 2), on both stores: a pattern that backtracks
// catastrophically in V8 is checked in linear time, so one value cannot hold the event loop;
// patterns that cannot run in linear time are refused when written, and left out (logged) when
// found in a schema file at start-up, in both notations.
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import fc from 'fast-check'
import { assertError, build, eachStore, tempDir } from '../helper.js'

const json = { 'content-type': 'application/json' }

/** Milliseconds `task` took, and its result. */
async function timed<T> (task: () => Promise<T>): Promise<{ ms: number, result: T }> {
  const started = performance.now()
  const result = await task()
  return { ms: performance.now() - started, result }
}

eachStore(t, async (t, _store, env) => {
  t.test('a catastrophic pattern answers at once, and /health is not held up', async t => {
    const app = await build(t, env)
    const schema = { name: 'codes', fields: { code: { field_type: 'string', pattern: '^(a+)+$' }, word: { field_type: 'string', pattern: '^[a-z]+$' } } }
    t.equal((await app.inject({ method: 'POST', url: '/api/schemas', payload: schema })).statusCode, 201)

    // In V8's engine this value took 11 s; each extra character doubles it.
    const short = await timed(async () => await app.inject({ method: 'POST', url: '/api/content/codes', payload: { _slug: 's', code: `${'a'.repeat(29)}!` } }))
    assertError(t, short.result, 422, 'VALIDATION_FAILED')
    t.strictSame(short.result.json().errors, ['code: must match the pattern ^(a+)+$'])
    t.ok(short.ms < 1000, `29 characters: ${short.ms.toFixed(1)} ms`)

    const long = `${'a'.repeat(900_000)}!`
    const [write, health] = await Promise.all([
      timed(async () => await app.inject({ method: 'POST', url: '/api/content/codes', payload: { _slug: 'l', code: long } })),
      timed(async () => await app.inject({ method: 'GET', url: '/health' }))
    ])
    assertError(t, write.result, 422, 'VALIDATION_FAILED')
    t.equal(health.result.statusCode, 200)
    t.ok(write.ms < 2000, `900,000 characters: ${write.ms.toFixed(1)} ms, /health answered after ${health.ms.toFixed(1)} ms`)

    const safe = await timed(async () => await app.inject({ method: 'POST', url: '/api/content/codes', payload: { _slug: 'w', word: 'a'.repeat(900_000), code: 'aaa' } }))
    t.equal(safe.result.statusCode, 201, 'a long value that matches is stored')
    t.ok(safe.ms < 2000, `a long value against a safe pattern: ${safe.ms.toFixed(1)} ms`)
    t.equal((await app.inject({ method: 'PATCH', url: '/api/content/codes/w', payload: { code: 'aab' } })).statusCode, 422)
  })

  t.test('a value too costly to check against a pattern is a 422 naming the field', async t => {
    const app = await build(t, env)
    const schema = { name: 'dna', fields: { seq: { field_type: 'text', pattern: '[ab]*a[ab]{400}c' } } }
    t.equal((await app.inject({ method: 'POST', url: '/api/schemas', payload: schema })).statusCode, 201)
    const random = (fc.sample(fc.array(fc.constantFrom('a', 'b'), { minLength: 100_000, maxLength: 100_000 }), { numRuns: 1, seed: 7 })[0] as string[]).join('')
    const res = await timed(async () => await app.inject({ method: 'POST', url: '/api/content/dna', payload: { _slug: 'x', seq: random } }))
    assertError(t, res.result, 422, 'VALIDATION_FAILED')
    t.strictSame(res.result.json().errors, ['seq: is too long to be checked against the pattern [ab]*a[ab]{400}c'])
    t.ok(res.ms < 2000, `${res.ms.toFixed(1)} ms`)
    t.equal((await app.inject({ method: 'POST', url: '/api/content/dna', payload: { _slug: 'y', seq: `ba${'b'.repeat(400)}c` } })).statusCode, 201)
  })

  t.test('schema writes refuse patterns that cannot run in linear time', async t => {
    const app = await build(t, env)
    const write = async (method: 'POST' | 'PUT', pattern: string): Promise<ReturnType<typeof app.inject>> =>
      await app.inject({ method, url: method === 'POST' ? '/api/schemas' : '/api/schemas/p', headers: json, payload: { name: 'p', fields: { f: { field_type: 'string', pattern } } } })
    const cases: Array<[string, RegExp]> = [
      ['^(?=.*\\d).{8,}$', /^f: pattern cannot use lookahead or lookbehind assertions/],
      ['(?<!x)y', /^f: pattern cannot use lookahead or lookbehind assertions/],
      ['^(\\w)\\1$', /^f: pattern cannot use backreferences/],
      ['^\\d{5000}$', /^f: pattern is too large/],
      ['^[a-', /^f: pattern is not a valid regular expression/]
    ]
    for (const [pattern, message] of cases) {
      const res = await write('POST', pattern)
      assertError(t, res, 422, 'VALIDATION_FAILED')
      t.match(res.json().errors[0], message, pattern)
    }
    t.equal((await write('POST', '^(a+)+$')).statusCode, 201, 'a nested quantifier is accepted: it runs in linear time')
    const res = await write('PUT', '(?=a)')
    assertError(t, res, 422, 'VALIDATION_FAILED')
    t.equal((await app.inject({ method: 'GET', url: '/api/collections/p' })).json().fields.f.pattern, '^(a+)+$', 'the refused PUT changed nothing')
  })

  t.test('schema files with such patterns are left out at start-up; the server starts', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    const types = path.join(dataDir, 'types')
    mkdirSync(types, { recursive: true })
    const draft07 = (pattern: string): string => JSON.stringify({
      $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { f: { type: 'string', pattern } }
    })
    writeFileSync(path.join(types, 'look.json5'), "{ name: 'look', fields: { f: { field_type: 'string', pattern: '(?<=a)b' } } }")
    writeFileSync(path.join(types, 'backref.json'), draft07('(a)\\1'))
    writeFileSync(path.join(types, 'nested.json'), draft07('^(a+)+$'))
    const app = await build(t, env, { dataDir })
    for (const name of ['look', 'backref']) {
      assertError(t, await app.inject({ method: 'GET', url: `/api/content/${name}` }), 404, 'NOT_FOUND')
      t.equal((await app.inject({ method: 'GET', url: `/api/schemas/${name}/raw` })).statusCode, 200, 'its file is still served as written')
    }
    const res = await timed(async () => await app.inject({ method: 'POST', url: '/api/content/nested', payload: { _slug: 'n', f: `${'a'.repeat(100_000)}!` } }))
    assertError(t, res.result, 422, 'VALIDATION_FAILED')
    t.strictSame(res.result.json().errors, ['f: must match the pattern ^(a+)+$'], 'a draft-07 pattern runs on the same matcher')
    t.ok(res.ms < 2000, `${res.ms.toFixed(1)} ms`)
    t.equal((await app.inject({ method: 'POST', url: '/api/content/nested', payload: { _slug: 'm', f: 'aaa' } })).statusCode, 201)
  })
})
