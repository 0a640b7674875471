// Keyset paging (contract §10) on the lists besides content's, on every store: GET /api/assets and
// GET /api/webhooks/deliveries carry `next`, `_after=<next>` gives the page after, a walk meets
// every item there throughout exactly once while items are added and removed, and `_after` is a
// 400 when malformed, with `_page`, or from another query.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { assertError, assertShape, build, eachStore } from '../helper.js'
import { AssetList } from '../../routes/api/assets/schemas.js'
import { DeliveriesReply } from '../../routes/api/webhooks/deliveries/schemas.js'
import { png, upload } from '../lib/assets/fixtures.js'
import { receiver, until } from '../lib/webhooks/receiver.js'
import type { CmsEvent } from '../../types/events.js'

interface Page { items: Array<Record<string, unknown>>, total: number, page: number | null, per_page: number, pages: number, next: string | null }

async function list (t: Test, app: FastifyInstance, url: string, schema: object): Promise<Page> {
  const res = await app.inject({ url })
  t.equal(res.statusCode, 200, url, { body: res.body })
  const body = res.json<Page>()
  assertShape(t, schema, body)
  return body
}

/**
 * The items of a walk with `_after` (`key` names each), page by page, `between` running before
 * each page after the first.
 */
async function walk (t: Test, app: FastifyInstance, base: string, schema: object, key: string, between?: (page: number) => Promise<void>): Promise<string[]> {
  const sep = base.includes('?') ? '&' : '?'
  let body = await list(t, app, base, schema)
  t.equal(body.page, 1)
  const seen: string[] = []
  for (let page = 1; ; page++) {
    seen.push(...body.items.map(i => String(i[key])))
    if (body.next === null) return seen
    await between?.(page)
    body = await list(t, app, `${base}${sep}_after=${encodeURIComponent(body.next)}`, schema)
    t.equal(body.page, null, 'a keyset page has no number')
  }
}

/** `_after` problems, as content lists answer them: malformed, with `_page`, from another query. */
async function badCursors (t: Test, app: FastifyInstance, base: string, other: string, next: string): Promise<void> {
  const bad = async (url: string, mentions: RegExp): Promise<void> => {
    const res = await app.inject({ url })
    assertError(t, res, 400, 'BAD_REQUEST')
    t.match(res.json<{ message: string }>().message, mentions, url)
  }
  const sep = base.includes('?') ? '&' : '?'
  await bad(`${base}${sep}_after=${next}&_page=2`, /'_after' and '_page'/)
  await bad(`${base}${sep}_after=not-a-cursor`, /'_after'.*not a cursor/)
  await bad(`${base}${sep}_after=%2B%2B`, /'_after'/)
  await bad(`${base}${sep}_after=${Buffer.from('[1,"x",["a"],"a"]').toString('base64url')}`, /'_after'.*another query/)
  await bad(`${other}${other.includes('?') ? '&' : '?'}_after=${next}`, /'_after'.*another query/)
  await bad(`${base}${sep}_after=${next}&_after=${next}`, /_after/)
  // A cursor of this very query, but whose keys are not what its list orders by.
  const [version, fingerprint, keys, name] = JSON.parse(Buffer.from(next, 'base64url').toString('utf8')) as [number, string, unknown[], string]
  const forged = Buffer.from(JSON.stringify([version, fingerprint, keys.map(() => true), name])).toString('base64url')
  await bad(`${base}${sep}_after=${forged}`, /'_after'.*not a cursor/)
  const swapped = Buffer.from(JSON.stringify([version, fingerprint, [...keys].reverse().map(k => typeof k === 'number' ? String(k) : 1.5), name])).toString('base64url')
  await bad(`${base}${sep}_after=${swapped}`, /'_after'.*not a cursor/)
}

eachStore(t, async (t, _store, env) => {
  t.test('assets: next and _after, the same items as one big page, for every filter', async t => {
    const app = await build(t, env)
    const image = await png(4, 4)
    for (let i = 0; i < 7; i++) {
      const res = await upload(app, [{ name: `p${i}.png`, data: image }, { name: `t${i}.txt`, data: Buffer.from('text') }], { fields: { folder: i % 2 === 0 ? 'even' : 'odd' } })
      t.equal(res.statusCode, 201)
    }
    for (const query of ['', '?folder=even', '?mime=image/', '?_q=t', '?folder=odd&mime=text/']) {
      const whole = (await list(t, app, `/api/assets${query}${query === '' ? '?' : '&'}_per_page=1000`, AssetList)).items.map(i => String(i.path))
      t.ok(whole.length > 0, `${query} matches something`)
      for (const perPage of [1, 3]) {
        t.same(await walk(t, app, `/api/assets${query}${query === '' ? '?' : '&'}_per_page=${perPage}`, AssetList, 'path'), whole, `walk of ${query} in pages of ${perPage}`)
      }
    }
    const first = await list(t, app, '/api/assets?_per_page=5', AssetList)
    t.type(first.next, 'string', 'a numbered page has a next')
    const after = await list(t, app, `/api/assets?_per_page=5&_after=${first.next ?? ''}`, AssetList)
    const numbered = await list(t, app, '/api/assets?_per_page=5&_page=2', AssetList)
    t.same(after.items, numbered.items, 'the page after page 1 is page 2 when nothing changed')
    t.same([after.total, after.pages, after.page, after.per_page], [14, 3, null, 5], 'total and pages as usual')
    t.equal((await list(t, app, '/api/assets?_per_page=14', AssetList)).next, null, 'the last page has no next')
    t.equal((await list(t, app, '/api/assets?_per_page=7&_page=2', AssetList)).next, null, 'nor the last numbered page')
    await badCursors(t, app, '/api/assets?_per_page=5', '/api/assets?_per_page=5&folder=even', first.next ?? '')
  })

  t.test('assets: a walk meets every asset there throughout exactly once while others are uploaded and deleted', async t => {
    const app = await build(t, env)
    const image = await png(4, 4)
    for (let i = 0; i < 12; i++) t.equal((await upload(app, [{ name: `a${i}.png`, data: image }])).statusCode, 201)
    const before = (await list(t, app, '/api/assets?_per_page=1000', AssetList)).items.map(i => String(i.path))
    const deleted = new Set<string>()
    const seen = await walk(t, app, '/api/assets?_per_page=3', AssetList, 'path', async page => {
      t.equal((await upload(app, [{ name: `new${page}.png`, data: image }])).statusCode, 201)
      // One asset of those still to come, one of those already met.
      for (const victim of [before.at(-page), before[page]]) {
        if (victim === undefined || deleted.has(victim)) continue
        deleted.add(victim)
        t.equal((await app.inject({ method: 'DELETE', url: victim })).statusCode, 204)
      }
    })
    const counts = new Map<string, number>()
    for (const p of seen) counts.set(p, (counts.get(p) ?? 0) + 1)
    for (const p of before) if (!deleted.has(p)) t.equal(counts.get(p), 1, `${p} (there throughout) met once`)
    t.ok([...counts.values()].every(n => n === 1), 'no asset twice')
    t.notOk(seen.some(p => p.includes('/new')), 'uploads made during the walk are newer than its position')
  })

  t.test('webhook deliveries: next and _after, a walk meets every delivery once while events keep coming', async t => {
    const r = await receiver(t)
    const app = await build(t, { ...env, CMS_WEBHOOK_BACKOFF_MS: '1', CMS_WEBHOOKS: r.url })
    // Each event its own change (seq): the outbox announces a seq once.
    let seq = 0
    const emit = (slug: string): void => {
      const event: CmsEvent = { event: 'content.updated', collection: 'post', slug, locale: null, environment: 'default', seq: ++seq, status: 'published', previous_status: 'published' }
      app.events.emit(event)
    }
    for (let i = 0; i < 10; i++) emit(`e${i}`)
    await until(() => r.received.length === 10, 5000, 'ten deliveries')
    const url = '/api/webhooks/deliveries?_per_page=3'
    const whole = (await list(t, app, '/api/webhooks/deliveries?_per_page=1000', DeliveriesReply)).items.map(i => String(i.id))
    t.same(await walk(t, app, url, DeliveriesReply, 'id'), whole, 'the same deliveries, in the same order, as one big page')
    let late = 0
    const seen = await walk(t, app, url, DeliveriesReply, 'id', async page => { emit(`late${page}`); late++ })
    t.same(seen, whole, 'newer deliveries do not shift the walk')
    await until(() => r.received.length === 10 + late, 5000, 'the late deliveries')
    // A delivery is marked delivered once its answer is in: a moment after the receiver has it.
    let delivered: string[] = []
    for (const deadline = Date.now() + 5000; delivered.length <= 10 && Date.now() < deadline; await new Promise(resolve => setTimeout(resolve, 20))) {
      delivered = (await list(t, app, '/api/webhooks/deliveries?_per_page=1000&status=delivered', DeliveriesReply)).items.map(i => String(i.id))
    }
    t.ok(delivered.length > 10)
    t.same(await walk(t, app, `${url}&status=delivered`, DeliveriesReply, 'id'), delivered, 'the status filter walks too')
    const first = await list(t, app, url, DeliveriesReply)
    const after = await list(t, app, `${url}&_after=${first.next ?? ''}`, DeliveriesReply)
    t.same([after.page, after.per_page, after.total], [null, 3, first.total])
    await badCursors(t, app, url, `${url}&status=failed`, first.next ?? '')
  })
})
