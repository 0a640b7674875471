// GET /api/collections/<collection>/slug-check (interface.md "Slug check"), against both stores.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { EDITOR_KEY, KEYS_ENV, assertShape, auth, eachStore } from '../helper.js'
import { buildWithSchemas } from '../fixtures/content-schemas.js'
import { slugCheckSchema, type SlugCheckResult } from '../../routes/api/collections/_collection/slug-check/schemas.js'
import { SLUG_ERRORS } from '../../lib/slug.js'

async function check (t: Test, app: FastifyInstance, collection: string, query: string): Promise<SlugCheckResult> {
  const res = await app.inject({ method: 'GET', url: `/api/collections/${collection}/slug-check${query}` })
  t.equal(res.statusCode, 200, `200 for ${collection}${query}`)
  const body = res.json<SlugCheckResult>()
  assertShape(t, slugCheckSchema.response[200], body)
  return body
}

eachStore(t, async (t, _store, env) => {
  t.test('the six rules', async t => {
    const { app } = await buildWithSchemas(t, { ...env, ...KEYS_ENV, CMS_LOCALES: 'en,de', CMS_ENVIRONMENTS: 'main,staging' })
    const headers = auth(EDITOR_KEY)
    for (const payload of [{ _slug: 'taken', title: 'T' }, { _slug: 'hidden', _status: 'draft', title: 'H' }]) {
      t.equal((await app.inject({ method: 'POST', url: '/api/content/posts', headers, payload })).statusCode, 201)
    }

    // Rules 1 and 5: valid, and free or not in this collection, locale and environment.
    t.same(await check(t, app, 'posts', '?slug=Fresh%20Idea'), { valid: true, normalized: 'fresh-idea', available: true, error: null })
    t.same(await check(t, app, 'posts', '?slug=TAKEN'), { valid: true, normalized: 'taken', available: false, error: null })
    t.same(await check(t, app, 'posts', '?slug=hidden'), { valid: true, normalized: 'hidden', available: false, error: null },
      'a draft holds its slug even for a caller who cannot see it')
    t.equal((await check(t, app, 'posts', '?slug=taken&_locale=de')).available, true, 'another locale')
    t.equal((await check(t, app, 'posts', '?slug=taken&_environment=staging')).available, true, 'another environment')
    t.equal((await check(t, app, 'posts', '?slug=taken&_locale=xx&_environment=nope')).available, false, 'unknown values: the first ones')
    t.equal((await check(t, app, 'authors', '?slug=taken')).available, true, 'another collection')

    // Rule 4: the entry being edited keeps its slug.
    t.same(await check(t, app, 'posts', '?slug=Taken&exclude=%20taken%20'), { valid: true, normalized: 'taken', available: true, error: null })
    t.equal((await check(t, app, 'posts', '?slug=taken&exclude=other')).available, false)
    t.equal((await check(t, app, 'posts', '?slug=taken&exclude=%20%20')).available, false, 'a blank exclude counts for nothing')

    // Rules 2 and 6: invalid slugs are never available, and say why.
    t.same(await check(t, app, 'posts', '?slug='), { valid: false, normalized: '', available: false, error: SLUG_ERRORS.empty })
    t.same(await check(t, app, 'posts', ''), { valid: false, normalized: '', available: false, error: SLUG_ERRORS.empty }, 'no slug at all')
    for (const slug of ['a%2Fb', 'a%5Cb', '..', 'x..y']) {
      const body = await check(t, app, 'posts', `?slug=${slug}&exclude=${slug}`)
      t.same([body.valid, body.available, body.error], [false, false, SLUG_ERRORS.path], `path characters: ${slug}`)
    }
    const chars = await check(t, app, 'posts', '?slug=%24%24%24')
    t.same([chars.valid, chars.available, chars.error], [false, false, SLUG_ERRORS.invalid])
    const dashes = await check(t, app, 'posts', '?slug=---&exclude=')
    t.same([dashes.valid, dashes.normalized, dashes.available], [false, '', false], 'normalizes to empty')
    const long = await check(t, app, 'posts', `?slug=${'a'.repeat(201)}`)
    t.same([long.valid, long.available, long.error], [false, false, SLUG_ERRORS.tooLong])

    // Rule 3: an unknown or reusable collection.
    t.same(await check(t, app, 'nope', '?slug=fine'), { valid: true, normalized: 'fine', available: false, error: 'Collection not found.' })
    t.same(await check(t, app, 'base', '?slug=fine'), { valid: true, normalized: 'fine', available: false, error: 'Collection not found.' })
    t.equal((await check(t, app, 'nope', '?slug=a%2Fb')).error, 'Collection not found.')
  })
})
