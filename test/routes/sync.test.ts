// GET /api/sync (contract §9) on every store: initial and incremental runs, paging, scope fixed at
// initial, deletes and unpublishes, the 400s and the 410, signed cursors, restarts, and a run with
// writes racing it that leaves the client exactly in sync.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { ADMIN_KEY, KEYS_ENV, VIEWER_KEY, assertError, assertShape, auth, build, eachStore, type Env } from '../helper.js'
import { buildWithSchemas } from '../fixtures/content-schemas.js'
import { syncSchema } from '../../routes/api/sync/schemas.js'
import { decodeSyncCursor, encodeSyncCursor } from '../../lib/sync/cursor.js'
import { PostgresStore } from '../../lib/store/postgres.js'
import { SYNC_KEY_FILE, loadSharedSyncSecret } from '../../lib/sync/secret.js'

type Body = Record<string, unknown> & { _slug: string }
interface Item { op: 'upsert' | 'delete', collection: string, slug: string, seq: number, entry?: Body }
interface Answer { items: Item[], cursor: string, more: boolean }

const admin = auth(ADMIN_KEY)
const anonymous = {}
const COLLECTIONS = ['authors', 'posts']

/** A client's copy: `<collection>/<slug>` → the entry's JSON text. */
type Copy = Map<string, string>

async function get (t: Test, app: FastifyInstance, query: string, headers: Record<string, string>): Promise<Answer> {
  const res = await app.inject({ url: `/api/sync?${query}`, headers })
  t.equal(res.statusCode, 200, `GET /api/sync?${query.slice(0, 60)}`, { body: res.body })
  const body = res.json<Answer>()
  assertShape(t, syncSchema.response[200], body)
  t.equal(res.headers['cache-control'], 'no-store')
  return body
}

/** A whole run (until more is false), applied to `copy`; the answers and the last cursor. */
async function run (t: Test, app: FastifyInstance, start: string, headers: Record<string, string>, copy: Copy, between?: () => Promise<void>): Promise<{ answers: Answer[], cursor: string }> {
  const answers: Answer[] = []
  let answer = await get(t, app, start, headers)
  for (;;) {
    answers.push(answer)
    const keys = answer.items.map(i => `${i.collection}/${i.slug}`)
    t.equal(new Set(keys).size, keys.length, 'an entry appears at most once per answer')
    for (const item of answer.items) {
      if (item.op === 'upsert') copy.set(`${item.collection}/${item.slug}`, JSON.stringify(item.entry))
      else copy.delete(`${item.collection}/${item.slug}`)
    }
    if (!answer.more) return { answers, cursor: answer.cursor }
    await between?.()
    answer = await get(t, app, `cursor=${encodeURIComponent(answer.cursor)}${start.includes('_per_page') ? `&${start.split('&').find(p => p.startsWith('_per_page')) ?? ''}` : ''}`, headers)
  }
}

/** What the server holds, as a client of this view should: every entry's GET body. */
async function serverState (t: Test, app: FastifyInstance, headers: Record<string, string>, status: 'all' | 'published', collections = COLLECTIONS): Promise<Copy> {
  const copy: Copy = new Map()
  for (const collection of collections) {
    const res = await app.inject({ url: `/api/content/${collection}?_per_page=1000&_status=${status}`, headers })
    t.equal(res.statusCode, 200)
    for (const item of res.json<{ items: Body[] }>().items) {
      const one = await app.inject({ url: `/api/content/${collection}/${item._slug}`, headers })
      copy.set(`${collection}/${item._slug}`, JSON.stringify(JSON.parse(one.body)))
    }
  }
  return copy
}

async function write (t: Test, app: FastifyInstance, method: string, url: string, payload?: Record<string, unknown>): Promise<void> {
  const res = await app.inject({ method: method as 'POST', url, headers: admin, ...(payload === undefined ? {} : { payload }) })
  t.ok(res.statusCode < 300, `${method} ${url}`, { body: res.body })
}

/** The key the app signs cursors with: the data dir's, or the schema's with PostgreSQL. */
async function syncSecret (app: FastifyInstance): Promise<Buffer> {
  if (app.store instanceof PostgresStore) return await loadSharedSyncSecret(app.store)
  return Buffer.from(readFileSync(path.join(app.config.dataDir, SYNC_KEY_FILE), 'utf8').trim(), 'hex')
}

async function seed (t: Test, app: FastifyInstance, posts = 7, titleSuffix = ''): Promise<void> {
  await write(t, app, 'POST', '/api/content/authors', { _slug: 'ann', name: 'Ann' })
  await write(t, app, 'POST', '/api/content/authors', { _slug: 'bob', name: 'Bob', _status: 'draft' })
  for (let i = 1; i <= posts; i++) await write(t, app, 'POST', '/api/content/posts', { _slug: `p${i}`, title: `Post ${i}${titleSuffix}`, _status: i % 3 === 0 ? 'draft' : 'published' })
}

eachStore(t, async (t, store, env: Env) => {
  const keys = { ...env, ...KEYS_ENV }

  t.test('an initial run gives every visible entry once, as upsert, its entry exactly the GET body; paging with more/cursor', async t => {
    const { app } = await buildWithSchemas(t, keys)
    await seed(t, app)
    for (const [headers, status] of [[admin, 'all'], [anonymous, 'published'], [auth(VIEWER_KEY), 'all']] as const) {
      const copy: Copy = new Map()
      const { answers } = await run(t, app, 'initial=true&_per_page=2', headers, copy)
      t.ok(answers.length > 2, 'several answers')
      t.ok(answers.slice(0, -1).every(a => a.more && a.items.length === 2), 'full answers say more')
      t.ok(answers.flatMap(a => a.items).every(i => i.op === 'upsert'), 'an initial run only upserts')
      t.same(copy, await serverState(t, app, headers, status), `the copy is the server's content (${status})`)
    }
    const one = await get(t, app, 'initial=true&collections=posts&_per_page=1000', admin)
    const p1 = one.items.find(i => i.slug === 'p1') as Item
    const body = (await app.inject({ url: '/api/content/posts/p1', headers: admin })).body
    t.equal(JSON.stringify(p1.entry), body, 'the entry is byte for byte the GET body')
    t.equal(p1.seq, 3, 'seq: the entry\'s latest change')
    t.equal(one.items.length, 7)
    t.equal((await get(t, app, 'initial=true', admin)).items.length, 9, '_per_page defaults to 100')
  })

  t.test('incremental runs: nothing, then edits, deletes, unpublishes (a delete in the published view) and publishes', async t => {
    const { app } = await buildWithSchemas(t, keys)
    await seed(t, app)
    const views = [{ headers: admin, status: 'all' as const }, { headers: anonymous, status: 'published' as const }]
    const clients = []
    for (const view of views) {
      const copy: Copy = new Map()
      clients.push({ ...view, copy, cursor: (await run(t, app, 'initial=true', view.headers, copy)).cursor })
    }
    for (const client of clients) {
      const none = await get(t, app, `cursor=${client.cursor}`, client.headers)
      t.same([none.items, none.more], [[], false], 'no changes: no items')
      t.equal(decodeSyncCursor(none.cursor, Buffer.alloc(32)), null, 'the cursor is signed')
    }
    await write(t, app, 'PATCH', '/api/content/posts/p1', { title: 'Edited' })
    await write(t, app, 'DELETE', '/api/content/posts/p2')
    await write(t, app, 'PATCH', '/api/content/posts/p4', { _status: 'draft' })
    await write(t, app, 'PATCH', '/api/content/posts/p3', { _status: 'published' })
    await write(t, app, 'DELETE', '/api/content/posts/p6')
    await write(t, app, 'POST', '/api/content/posts', { _slug: 'p9', title: 'New' })
    for (const client of clients) {
      const answer = await get(t, app, `cursor=${client.cursor}`, client.headers)
      const ops = Object.fromEntries(answer.items.map(i => [i.slug, i.op]))
      if (client.status === 'published') {
        t.same(ops, { p1: 'upsert', p2: 'delete', p4: 'delete', p3: 'upsert', p6: 'delete', p9: 'upsert' }, 'published view: the unpublished p4 is a delete')
      } else {
        t.same(ops, { p1: 'upsert', p2: 'delete', p4: 'upsert', p3: 'upsert', p6: 'delete', p9: 'upsert' }, 'all view: p4 is an upsert (a draft now)')
      }
      t.same(answer.items.map(i => i.seq), [...answer.items.map(i => i.seq)].sort((a, b) => a - b), 'in seq order')
      for (const item of answer.items) {
        if (item.op === 'upsert') client.copy.set(`posts/${item.slug}`, JSON.stringify(item.entry))
        else client.copy.delete(`posts/${item.slug}`)
      }
      t.same(client.copy, await serverState(t, app, client.headers, client.status), `in sync (${client.status})`)
      const again = await get(t, app, `cursor=${client.cursor}`, client.headers)
      t.same(again.items, answer.items, 'an older cursor may be used again')
    }
  })

  t.test('the scope is fixed at initial and carried by the cursor', async t => {
    const { app } = await buildWithSchemas(t, { ...keys, CMS_ENVIRONMENTS: 'main,staging', CMS_LOCALES: 'en,fr' })
    await write(t, app, 'POST', '/api/content/posts', { _slug: 'main-en', title: 'x' })
    await write(t, app, 'POST', '/api/content/posts?_environment=staging', { _slug: 'staging-en', title: 'x' })
    await write(t, app, 'POST', '/api/content/posts?_locale=fr', { _slug: 'main-fr', title: 'x' })
    await write(t, app, 'POST', '/api/content/authors?_environment=staging', { _slug: 'ann', name: 'Ann' })
    const staging = await get(t, app, 'initial=true&_environment=staging', admin)
    t.same(staging.items.map(i => i.slug).sort(), ['ann', 'staging-en'])
    const fr = await get(t, app, 'initial=true&_locale=fr', admin)
    t.same(fr.items.map(i => i.slug), ['main-fr'])
    const postsOnly = await get(t, app, 'initial=true&_environment=staging&collections=posts,posts', admin)
    t.same(postsOnly.items.map(i => i.slug), ['staging-en'])
    await write(t, app, 'POST', '/api/content/posts?_environment=staging', { _slug: 'later', title: 'x' })
    await write(t, app, 'POST', '/api/content/authors?_environment=staging', { _slug: 'cy', name: 'Cy' })
    await write(t, app, 'POST', '/api/content/posts', { _slug: 'later-main', title: 'x' })
    const next = await get(t, app, `cursor=${postsOnly.cursor}&_per_page=5`, admin)
    t.same(next.items.map(i => i.slug), ['later'], 'environment and collections come from the cursor')
    // A cursor cannot be edited to read another environment, or drafts without a key.
    const secret = await syncSecret(app)
    const decoded = decodeSyncCursor(postsOnly.cursor, secret)
    t.same(decoded, { environment: 'staging', locale: 'en', collections: ['posts'], publishedOnly: false, seq: decoded?.seq })
    const [payload, mac] = postsOnly.cursor.split('.') as [string, string]
    const edited = Buffer.from(Buffer.from(payload, 'base64url').toString().replace('"staging"', '"main"')).toString('base64url')
    assertError(t, await app.inject({ url: `/api/sync?cursor=${edited}.${mac}`, headers: admin }), 400, 'BAD_REQUEST')
    assertError(t, await app.inject({ url: `/api/sync?cursor=${postsOnly.cursor}`, headers: anonymous }), 400, 'BAD_REQUEST')
    const ahead = encodeSyncCursor({ ...(decoded as NonNullable<typeof decoded>), seq: 1000 }, secret)
    assertError(t, await app.inject({ url: `/api/sync?cursor=${ahead}`, headers: admin }), 410, 'CURSOR_EXPIRED')
  })

  t.test('400s: malformed or misused cursors and bad parameters', async t => {
    const { app } = await buildWithSchemas(t, keys)
    await seed(t, app, 2)
    const { cursor } = await get(t, app, 'initial=true', admin)
    const bad = async (query: string, mentions: RegExp, headers: Record<string, string> = admin): Promise<void> => {
      const res = await app.inject({ url: `/api/sync${query}`, headers })
      assertError(t, res, 400, 'BAD_REQUEST')
      t.match(res.json<{ message: string }>().message, mentions, query)
    }
    await bad('', /'initial=true'.*'cursor'/)
    await bad(`?initial=true&cursor=${cursor}`, /'cursor' and 'initial'/)
    await bad('?initial=yes', /'initial'/)
    await bad(`?cursor=${cursor}&collections=posts`, /'collections' cannot be used with 'cursor'/)
    await bad(`?cursor=${cursor}&_status=all`, /'_status'/)
    await bad(`?cursor=${cursor}&_environment=main`, /'_environment'/)
    await bad('?cursor=abc', /'cursor'/)
    await bad(`?cursor=${cursor}x`, /'cursor'/)
    await bad(`?cursor=${cursor.split('.')[0] ?? ''}`, /'cursor'/)
    await bad(`?cursor=${'a'.repeat(9000)}.b`, /'cursor'/)
    await bad('?initial=true&collections=nope', /'collections'.*'nope'/)
    await bad('?initial=true&collections=base', /'collections'.*'base'/)
    await bad('?initial=true&collections=,', /'collections'/)
    await bad('?initial=true&_status=draft', /'_status'/)
    await bad('?initial=true&_per_page=0', /'_per_page'/)
    await bad('?initial=true&_per_page=1001', /'_per_page'/)
    await bad('?initial=true&_per_page=1e2', /'_per_page'/)
    await bad('?initial=true&per_page=10', /Unknown parameter 'per_page'.*Did you mean '_per_page'/)
    await bad('?initial=true&initial=true', /initial/)
    t.equal((await get(t, app, `cursor=${cursor}&_per_page=1&_=123`, admin)).more, false, '_per_page and the cache buster may come with a cursor')
    const anonymousAll = await get(t, app, 'initial=true&_status=all', anonymous)
    t.ok(anonymousAll.items.every(i => i.entry?._status === 'published'), 'without a key, always published')
  })

  t.test('only current collections are announced: not a deleted schema\'s entries', async t => {
    const { app } = await buildWithSchemas(t, keys)
    await seed(t, app, 2)
    const { cursor } = await get(t, app, 'initial=true', admin)
    await write(t, app, 'PATCH', '/api/content/authors/ann', { name: 'Anne' })
    await write(t, app, 'PATCH', '/api/content/posts/p1', { title: 'Edited' })
    t.same((await get(t, app, `cursor=${cursor}`, admin)).items.map(i => i.slug), ['ann', 'p1'], 'before: both (an answer kept for this cursor)')
    const res = await app.inject({ method: 'DELETE', url: '/api/schemas/authors', headers: admin })
    t.equal(res.statusCode, 204, 'the schema is deleted', { body: res.body })
    t.same((await get(t, app, `cursor=${cursor}`, admin)).items.map(i => i.slug), ['p1'], 'incremental: the deleted schema\'s change is left out, though no entry was written since the kept answer')
    t.same((await get(t, app, 'initial=true', admin)).items.map(i => i.collection), ['posts', 'posts'], 'initial: only current collections')
    assertError(t, await app.inject({ url: '/api/sync?initial=true&collections=authors', headers: admin }), 400, 'BAD_REQUEST')
  })

  t.test('the log and the cursors survive a restart', async t => {
    const { app, dataDir } = await buildWithSchemas(t, keys, { keepOpen: true })
    await seed(t, app)
    const copy: Copy = new Map()
    const { cursor } = await run(t, app, 'initial=true&_per_page=3', admin, copy)
    await app.close()
    const again = await build(t, keys, { dataDir })
    await write(t, again, 'DELETE', '/api/content/posts/p1')
    await write(t, again, 'PATCH', '/api/content/authors/ann', { name: 'Anne' })
    const answer = await run(t, again, `cursor=${cursor}`, admin, copy)
    t.same(answer.answers[0]?.items.map(i => [i.slug, i.op]), [['p1', 'delete'], ['ann', 'upsert']])
    t.same(copy, await serverState(t, again, admin, 'all'))
  })

  t.test('one key per PostgreSQL schema: a cursor from one replica works on another with its own data dir', { skip: store !== 'postgres' && 'only PostgreSQL is shared by processes' }, async t => {
    const { app, dataDir } = await buildWithSchemas(t, keys)
    await seed(t, app)
    const { cursor } = await run(t, app, 'initial=true&_per_page=3', admin, new Map())
    // Another process: its own data dir (no sync.key of the first), the same schema and types.
    const other = await build(t, { ...keys, CMS_DATABASE_URL: app.config.databaseUrl ?? '', CMS_TYPES_DIR: path.join(dataDir, 'types') })
    t.not(other.config.dataDir, dataDir)
    t.same(await syncSecret(other), await syncSecret(app), 'one key')
    await write(t, other, 'DELETE', '/api/content/posts/p1')
    t.same((await get(t, other, `cursor=${cursor}`, admin)).items.map(i => [i.slug, i.op]), [['p1', 'delete']], 'the first replica\'s cursor read on the second')
  })

  t.test('with the cache off, an answer is written into the content pool\'s memory, given back once sent, and reused', async t => {
    const { app } = await buildWithSchemas(t, { ...keys, CMS_CACHE_MAX: '0' })
    // Enough posts for the answer to pass Node's own threshold (half Buffer.poolSize: 4 KB on Node 20, 32 KB on Node 24).
    await seed(t, app, Math.max(30, Math.ceil((Buffer.poolSize >>> 1) / 150)), ' '.padEnd(100, 'x'))
    const pool = app.content.bodies
    const before = pool.freeCount
    const first = await app.inject({ url: '/api/sync?initial=true&_per_page=1000', headers: admin })
    t.ok(first.rawPayload.length >= Buffer.poolSize >>> 1, 'an answer large enough to be pooled')
    t.equal(pool.freeCount, before + 1, 'its memory is back in the pool once sent')
    await write(t, app, 'PATCH', '/api/content/posts/p1', { title: 'Changed' })
    const second = await app.inject({ url: '/api/sync?initial=true&_per_page=1000', headers: admin })
    t.equal(pool.freeCount, before + 1, 'the next answer took the same memory and gave it back')
    const items = (res: typeof first): Item[] => res.json<Answer>().items
    const slugs = (res: typeof first): string[] => items(res).map(i => i.slug).sort()
    t.same(slugs(second), slugs(first), 'the same entries (p1 now last: its change is the latest)')
    t.equal(items(second).find(i => i.slug === 'p1')?.entry?.title, 'Changed', 'written afresh: nothing left of the first answer')
    t.same(items(second).filter(i => i.slug !== 'p1'), items(first).filter(i => i.slug !== 'p1'), 'the others as before')
  })

  t.test('a run with writes racing it, then one incremental run, leaves the client exactly in sync', async t => {
    const { app } = await buildWithSchemas(t, keys)
    await seed(t, app, 30)
    for (const view of [{ headers: admin, status: 'all' as const }, { headers: anonymous, status: 'published' as const }]) {
      const copy: Copy = new Map()
      let round = 0
      const racing = async (): Promise<void> => {
        // Writes race the first pages; a feed whose writers never stop never ends a run.
        if (round === 8) return
        round++
        const n = (k: number): number => ((round * 7 + k) % 30) + 1
        // Concurrent with each other, and with the next page.
        const attempt = async (method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: Record<string, unknown>): Promise<void> => {
          const res = await app.inject({ method, url, headers: admin, ...(payload === undefined ? {} : { payload }) })
          // An entry an earlier round deleted (404), or re-created already (409), is part of the race.
          t.ok(res.statusCode < 300 || res.statusCode === 404 || res.statusCode === 409, `${method} ${url}`, { body: res.body })
        }
        await Promise.all([
          attempt('POST', '/api/content/posts', { _slug: `r${view.status}${round}`, title: 'race', _status: round % 2 === 0 ? 'draft' : 'published' }),
          attempt('PATCH', `/api/content/posts/p${n(0)}`, { title: `upd ${round}` }),
          attempt('PATCH', `/api/content/posts/p${n(1)}`, { _status: round % 2 === 0 ? 'published' : 'draft' }),
          attempt('DELETE', `/api/content/posts/p${n(2)}`),
          attempt('PUT', `/api/content/posts/p${n(3)}`, { title: 'put' }),
          attempt('POST', '/api/content/posts', { _slug: `p${n(4)}`, title: 'back' })
        ])
      }
      const { cursor } = await run(t, app, 'initial=true&_per_page=4', view.headers, copy, racing)
      t.ok(round > 3, 'writes raced several pages')
      await run(t, app, `cursor=${cursor}`, view.headers, copy)
      t.same(copy, await serverState(t, app, view.headers, view.status), `in sync after the run and one incremental run (${view.status})`)
    }
  })
})
