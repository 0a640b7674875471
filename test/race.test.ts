// The race suite (issue 28, "Suites that keep it so"), on every store: requests sent in one
// burst, as concurrent clients would, then the data checked through the API, again after a
// restart. 50 creates of one slug give one 201 (the rest 409); 50 creates holding one unique value
// give one 201 (the rest 422); schema writes racing content writes lose no acknowledged write and
// leave one of the schemas written; the change log and the referrers agree with the entries.
// LECTERN_RACE_ROUNDS (default 2) sets the rounds of each race, LECTERN_RACE_CLIENTS (default 50)
// its racers: `LECTERN_RACE_ROUNDS=20 npx tap test/race.test.ts`.
import path from 'node:path'
import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { assertError, build, eachStore, tempDir, type Env } from './helper.js'

const ROUNDS = Math.max(1, Number(process.env.LECTERN_RACE_ROUNDS ?? 2))
const CLIENTS = Math.max(2, Number(process.env.LECTERN_RACE_CLIENTS ?? 50))

const AUTHORS = { name: 'authors', fields: { name: { field_type: 'string' } } }
const POSTS = {
  name: 'posts',
  fields: {
    title: { field_type: 'string', required: true },
    code: { field_type: 'string', unique: true },
    author: { field_type: 'reference', collection: 'authors' }
  }
}

type Body = Record<string, unknown>

const send = async (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: Body): Promise<LightMyRequestResponse> =>
  await app.inject({ method, url, ...(payload === undefined ? {} : { payload }) })

type Answer = LightMyRequestResponse & { order: number }

/** The requests at once, as many clients would send them; each answer with the order it came in. */
async function burst (app: FastifyInstance, requests: Array<[method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: Body]>): Promise<Answer[]> {
  let answered = 0
  return await Promise.all(requests.map(async ([method, url, body]) => Object.assign(await send(app, method, url, body), { order: answered++ })))
}

const statuses = (responses: LightMyRequestResponse[]): Record<number, number> => {
  const out: Record<number, number> = {}
  for (const res of responses) out[res.statusCode] = (out[res.statusCode] ?? 0) + 1
  return out
}

/** Every entry of a collection, by slug. */
async function everything (app: FastifyInstance, collection: string): Promise<Map<string, Body>> {
  const out = new Map<string, Body>()
  for (let page = 1; ; page++) {
    const res = await send(app, 'GET', `/api/content/${collection}?_per_page=1000&_page=${page}`)
    const body = res.json() as { items: Body[], pages: number }
    for (const item of body.items) out.set(item._slug as string, item)
    if (page >= body.pages) return out
  }
}

interface Expected {
  /** Every post a 201 or 200 acknowledged, as last acknowledged (null: deleted). */
  posts: Map<string, Body | null>
  /** The schema of the last acknowledged schema write. */
  schema: Body
}

/** What must hold, now and after a restart: the acknowledged writes, unique values, referrers, the change log. */
async function checkInvariants (t: Test, app: FastifyInstance, expected: Expected): Promise<void> {
  const posts = await everything(app, 'posts')
  const wanted = [...expected.posts].filter(([, body]) => body !== null)
  t.equal(posts.size, wanted.length, 'the posts are exactly the acknowledged ones')
  for (const [slug, body] of wanted) {
    const stored = posts.get(slug)
    if (stored === undefined || stored.title !== (body as Body).title || stored.code !== (body as Body).code) {
      t.fail(`post ${slug} is not as acknowledged`, { stored, body })
    }
  }
  const codes = [...posts.values()].map(p => p.code).filter(code => code !== undefined)
  t.equal(new Set(codes).size, codes.length, 'no unique value is held twice')
  const schema = (await send(app, 'GET', '/api/schemas/posts/raw')).json() as Body
  t.strictSame(schema.fields, expected.schema.fields, 'the schema is the last one acknowledged')
  const referrers = (await send(app, 'GET', '/api/content/authors/jane/referrers')).json() as Array<{ slug: string }>
  const naming = [...posts.values()].filter(p => p.author === 'jane').map(p => p._slug as string).sort()
  t.strictSame(referrers.map(r => r.slug).sort(), naming, 'the referrers are the posts naming the author')
  const log = await app.store.changes.since(0, 100_000, { environment: 'default', locale: null, collections: ['posts'] })
  const upserts = log.records.filter(r => r.op === 'upsert').map(r => r.slug).sort()
  t.strictSame(upserts, [...posts.keys()].sort(), 'the change log holds an upsert for each post, and only for them')
}

async function setup (t: Test, env: Env, dataDir: string): Promise<FastifyInstance> {
  const app = await build(t, env, { dataDir, keepOpen: true })
  return app
}

eachStore(t, async (t, _store, env) => {
  t.test(`races of ${CLIENTS} clients, ${ROUNDS} rounds each, then a restart`, async t => {
    const dataDir = path.join(tempDir(t), 'data')
    let app = await setup(t, env, dataDir)
    t.teardown(async () => { await app.close() })
    t.equal((await send(app, 'POST', '/api/schemas', AUTHORS)).statusCode, 201)
    t.equal((await send(app, 'POST', '/api/schemas', POSTS)).statusCode, 201)
    t.equal((await send(app, 'POST', '/api/content/authors', { _slug: 'jane', name: 'Jane' })).statusCode, 201)
    const expected: Expected = { posts: new Map(), schema: POSTS }

    for (let round = 0; round < ROUNDS; round++) {
      // One slug, many bodies: one create wins, and the entry is its body.
      const slug = `same-${round}`
      const bodies = Array.from({ length: CLIENTS }, (_, i) => ({ _slug: slug, title: `Client ${i}`, author: i % 2 === 0 ? 'jane' : undefined }))
      const creates = await burst(app, bodies.map(body => ['POST', '/api/content/posts', body]))
      t.strictSame(statuses(creates), { 201: 1, 409: CLIENTS - 1 }, `round ${round}: one create of the slug wins`)
      for (const res of creates) if (res.statusCode === 409) assertError(t, res, 409, 'CONFLICT')
      const winner = bodies[creates.findIndex(res => res.statusCode === 201)] as Body
      expected.posts.set(slug, winner)
      const stored = (await send(app, 'GET', `/api/content/posts/${slug}`)).json() as Body
      t.equal(stored.title, winner.title, 'the entry is the winner\'s')

      // One unique value, many slugs: one holds it.
      const code = `code-${round}`
      const holders = await burst(app, Array.from({ length: CLIENTS }, (_, i) => ['POST', '/api/content/posts', { _slug: `u-${round}-${i}`, title: `U ${i}`, code }]))
      t.strictSame(statuses(holders), { 201: 1, 422: CLIENTS - 1 }, `round ${round}: one create of the unique value wins`)
      const holder = holders.findIndex(res => res.statusCode === 201)
      expected.posts.set(`u-${round}-${holder}`, { title: `U ${holder}`, code })

      // The same value moved onto existing entries by PATCH, at once: one takes it.
      const patches = await burst(app, [...expected.posts].filter(([, body]) => body !== null)
        .map(([s]) => ['PATCH', `/api/content/posts/${s}`, { code: `moved-${round}` }]))
      t.equal(patches.filter(res => res.statusCode === 200).length, 1, `round ${round}: one PATCH takes the unique value`)
      for (const res of patches) if (res.statusCode === 200) { const body = res.json() as Body; expected.posts.set(body._slug as string, body) }

      // Schema writes racing content writes: every acknowledged write stays, the last schema wins.
      const schemas = Array.from({ length: 4 }, (_, i) => ({ ...POSTS, fields: { ...POSTS.fields, [`extra${round}x${i}`]: { field_type: 'integer' } } }))
      const mixed = await burst(app, [
        ...schemas.map((schema): ['PUT', string, Body] => ['PUT', '/api/schemas/posts', schema]),
        ...Array.from({ length: CLIENTS }, (_, i): ['POST', string, Body] => ['POST', '/api/content/posts', { _slug: `m-${round}-${i}`, title: `M ${i}`, author: 'jane' }])
      ])
      t.equal(mixed.filter(res => res.statusCode >= 500).length, 0, `round ${round}: no 5xx when schema writes race content writes`)
      t.ok(mixed.every(res => res.statusCode === 200 || res.statusCode === 201), 'and each write is acknowledged', { statuses: statuses(mixed) })
      mixed.slice(schemas.length).forEach((res, i) => { if (res.statusCode === 201) expected.posts.set(`m-${round}-${i}`, { title: `M ${i}` }) })
      // The schema writes are serialized: the one acknowledged last is what stays.
      const lastPut = mixed.slice(0, schemas.length).reduce((a, b) => (b.order > a.order ? b : a))
      expected.schema = schemas[mixed.indexOf(lastPut)] as Body
      const extra = Object.keys(expected.schema.fields as Body).at(-1) as string
      const filtered = await send(app, 'GET', `/api/content/posts?title=M%201&_sort=-${extra}`)
      t.equal(filtered.statusCode, 200, 'a filter and a sort on the new schema answer')
      await checkInvariants(t, app, expected)
    }

    await app.close()
    app = await setup(t, env, dataDir)
    t.test('after a restart', async t => { await checkInvariants(t, app, expected) })
  })
})
