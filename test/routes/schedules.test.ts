// Scheduled publishing at the API (contract §13), on every store: a schedule runs within 5 s of
// its time through the normal update rules (event, change feed, anonymous read), applies a
// pending draft, unpublishes, keeps a failure with its message, is cancelled with its entry, runs
// after a restart, and races a manual edit without a double write; the error shapes and keys.
import path from 'node:path'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import {
  ADMIN_KEY, EDITOR_KEY, KEYS_ENV, STORES, VIEWER_KEY, assertError, assertShape, auth, build, eachStore, tempDir, type Env
} from '../helper.js'
import { until } from '../lib/webhooks/receiver.js'
import { createSchema } from '../../routes/api/content/_collection/_slug/schedule/schemas.js'
import { listSchema, type Schedule, type ScheduleList } from '../../routes/api/schedules/schemas.js'
import type { CmsEvent, ContentEvent } from '../../types/events.js'

// Each store's run waits for several schedules' times (about 30 s on a loaded machine).
t.setTimeout(Math.max(120_000, STORES.length * 60_000))

const SCHEMA = { name: 'post', fields: { title: { field_type: 'string', required: true } } }
/** Long enough for a loaded machine to make the request before the time comes. */
const LEAD_MS = 1500
/** How long a test waits for a schedule to run: the contract's 5 s, and room for a loaded machine. */
const WAIT_MS = 20_000

async function setUp (t: Test, env: Env, options: { dataDir?: string, keepOpen?: boolean } = {}): Promise<FastifyInstance> {
  const app = await build(t, env, options)
  const res = await app.inject({ method: 'POST', url: '/api/schemas', payload: SCHEMA, headers: auth(ADMIN_KEY) })
  t.equal(res.statusCode, 201, 'schema created', { body: res.body })
  return app
}

async function entry (t: Test, app: FastifyInstance, slug: string, status: 'draft' | 'published', query = ''): Promise<void> {
  const res = await app.inject({ method: 'POST', url: `/api/content/post${query}`, payload: { _slug: slug, _status: status, title: slug }, headers: auth(ADMIN_KEY) })
  t.equal(res.statusCode, 201, `entry ${slug} created`, { body: res.body })
}

async function schedule (t: Test, app: FastifyInstance, slug: string, action: 'publish' | 'unpublish', at: number, query = ''): Promise<Schedule> {
  const res = await app.inject({ method: 'POST', url: `/api/content/post/${slug}/schedule${query}`, payload: { action, at: new Date(at).toISOString() }, headers: auth(ADMIN_KEY) })
  t.equal(res.statusCode, 201, `${action} of ${slug} scheduled`, { body: res.body })
  const body = res.json<Schedule>()
  assertShape(t, createSchema.response[201], body)
  return body
}

async function list (t: Test, app: FastifyInstance, query = ''): Promise<ScheduleList> {
  const res = await app.inject({ url: `/api/schedules${query}`, headers: auth(ADMIN_KEY) })
  t.equal(res.statusCode, 200, `GET /api/schedules${query}`, { body: res.body })
  const body = res.json<ScheduleList>()
  assertShape(t, listSchema.response[200], body)
  return body
}

/** The entry as anonymous callers see it (undefined: not visible). */
async function anonymousRead (app: FastifyInstance, slug: string, query = ''): Promise<Record<string, unknown> | undefined> {
  const res = await app.inject({ url: `/api/content/post/${slug}${query}` })
  return res.statusCode === 200 ? res.json() : undefined
}

async function stored (app: FastifyInstance, slug: string, query = ''): Promise<Record<string, unknown>> {
  return (await app.inject({ url: `/api/content/post/${slug}${query}`, headers: auth(ADMIN_KEY) })).json()
}

/** Every content event the app emits from now on. */
function events (app: FastifyInstance): ContentEvent[] {
  const seen: ContentEvent[] = []
  const isContent = (event: CmsEvent): event is ContentEvent => event.event.startsWith('content.')
  app.events.on(event => { if (isContent(event)) seen.push(event) })
  return seen
}

/** The schedules with `status`, read without asserting (for polling). */
async function schedules (app: FastifyInstance, status: 'pending' | 'failed' = 'pending'): Promise<Schedule[]> {
  return (await app.inject({ url: `/api/schedules?status=${status}`, headers: auth(ADMIN_KEY) })).json<ScheduleList>().items
}

/** Waits until no schedule is pending (the runner took and ended them). */
async function nonePending (app: FastifyInstance, what: string): Promise<void> {
  await until(async () => (await schedules(app)).length === 0, WAIT_MS, what)
}

eachStore(t, async (t, _store, env) => {
  const keyed = { ...env, ...KEYS_ENV }

  t.test('a publish runs within 5 s of its time, through the update rules: event, change feed, anonymous read', async t => {
    const app = await setUp(t, keyed)
    await entry(t, app, 'p', 'draft')
    const seen = events(app)
    const sync = (await app.inject({ url: '/api/sync?initial=true' })).json<{ items: unknown[], cursor: string }>()
    t.same(sync.items, [], 'the change feed has no published entry yet')
    const at = Date.now() + LEAD_MS
    const made = await schedule(t, app, 'p', 'publish', at)
    t.match(made, { action: 'publish', at: new Date(at).toISOString(), collection: 'post', slug: 'p', locale: null, environment: 'default', status: 'pending', error: null })
    t.same((await list(t, app)).items, [made], 'listed while pending')
    const early = await anonymousRead(app, 'p')
    // (On a machine so loaded that its time has come already, this read proves nothing.)
    if (Date.now() < at) t.equal(early, undefined, 'still hidden before its time')

    const live = await until(async () => await anonymousRead(app, 'p'), WAIT_MS, 'the entry published')
    t.equal(live._status, 'published')
    const ranAfter = Date.parse(String(live._updated_at)) - at
    t.ok(ranAfter >= 0 && ranAfter <= 5000, `ran ${ranAfter} ms after its time`)
    t.match(seen, [{ event: 'content.updated', slug: 'p', status: 'published', previous_status: 'draft' }], 'one update event')
    t.equal(seen.length, 1)
    const next = (await app.inject({ url: `/api/sync?cursor=${encodeURIComponent(sync.cursor)}` })).json<{ items: Array<Record<string, unknown>> }>()
    t.match(next.items, [{ op: 'upsert', slug: 'p', entry: { _status: 'published' } }], 'in the change feed')
    await nonePending(app, 'the schedule gone')
    t.same((await list(t, app, '?status=failed')).items, [], 'not failed')
  })

  t.test('a publish applies the pending draft; an unpublish makes the entry a draft', async t => {
    const app = await setUp(t, keyed)
    await entry(t, app, 'd', 'published')
    await entry(t, app, 'u', 'published')
    const scope = { locale: null, environment: 'default' }
    // A pending draft, through the pipeline the draft routes call.
    await app.content.putDraft(scope, 'post', 'd', { title: 'Next' })
    t.equal((await anonymousRead(app, 'd'))?.title, 'd', 'the live entry unchanged')
    const at = Date.now() + LEAD_MS
    await schedule(t, app, 'd', 'publish', at)
    await schedule(t, app, 'u', 'unpublish', at)
    await until(async () => (await anonymousRead(app, 'd'))?.title === 'Next', WAIT_MS, 'the draft published')
    await until(async () => await anonymousRead(app, 'u') === undefined, WAIT_MS, 'unpublished')
    t.equal((await stored(app, 'u'))._status, 'draft')
    t.equal(await app.store.getDraft(scope, 'post', 'd'), undefined, 'the draft is gone')
    await nonePending(app, 'both ended')
  })

  t.test('a failure is kept with its message and listed with status=failed; the entry is unchanged', async t => {
    const app = await setUp(t, keyed)
    await entry(t, app, 'f', 'draft')
    const made = await schedule(t, app, 'f', 'publish', Date.now() + LEAD_MS)
    // A schema change before it runs makes the entry's data invalid.
    const changed = await app.inject({
      method: 'PUT',
      url: '/api/schemas/post',
      payload: { ...SCHEMA, fields: { ...SCHEMA.fields, summary: { field_type: 'string', required: true } } },
      headers: auth(ADMIN_KEY)
    })
    t.equal(changed.statusCode, 200, 'schema changed', { body: changed.body })
    const failed = await until(async () => (await schedules(app, 'failed'))[0], WAIT_MS, 'the failure')
    t.same({ ...failed, error: 'x' }, { ...made, status: 'failed', error: 'x' })
    t.match(failed.error, /^Validation failed: summary: is required$/, 'the message and its details, in one line')
    t.equal((await list(t, app)).total, 0, 'it left the pending list')
    t.equal((await stored(app, 'f'))._status, 'draft', 'the entry is unchanged')
    const cancelled = await app.inject({ method: 'DELETE', url: `/api/schedules/${made.id}`, headers: auth(ADMIN_KEY) })
    t.equal(cancelled.statusCode, 204, 'a failed schedule can be deleted')
    t.equal((await list(t, app, '?status=failed')).total, 0)
  })

  t.test('deleting the entry cancels its schedules; DELETE of a schedule; 404 for an unknown id', async t => {
    const app = await setUp(t, keyed)
    await entry(t, app, 'a', 'draft')
    await entry(t, app, 'b', 'draft')
    const later = Date.now() + 3_600_000
    await schedule(t, app, 'a', 'publish', later)
    await schedule(t, app, 'a', 'unpublish', later + 1000)
    const b = await schedule(t, app, 'b', 'publish', later - 1000)
    const first = await list(t, app)
    t.same(first.items.map(s => [s.slug, s.action]), [['b', 'publish'], ['a', 'publish'], ['a', 'unpublish']], 'soonest first')
    t.equal((await app.inject({ method: 'DELETE', url: '/api/content/post/a', headers: auth(ADMIN_KEY) })).statusCode, 204)
    t.same((await list(t, app)).items.map(s => s.id), [b.id], 'only the other entry\'s is left')
    // Made again, the entry has no schedule.
    await entry(t, app, 'a', 'draft')
    t.equal((await list(t, app)).total, 1)

    t.equal((await app.inject({ method: 'DELETE', url: `/api/schedules/${b.id}`, headers: auth(EDITOR_KEY) })).statusCode, 204)
    t.equal((await list(t, app)).total, 0)
    assertError(t, await app.inject({ method: 'DELETE', url: `/api/schedules/${b.id}`, headers: auth(ADMIN_KEY) }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ method: 'DELETE', url: '/api/schedules/no-such-id', headers: auth(ADMIN_KEY) }), 404, 'NOT_FOUND')
  })

  t.test('a schedule due while the server was down runs after the restart', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    const first = await setUp(t, keyed, { dataDir, keepOpen: true })
    await entry(t, first, 'r', 'draft')
    const at = Date.now() + LEAD_MS
    await schedule(t, first, 'r', 'publish', at)
    await first.close()
    // The clock has to pass the schedule's time while nothing runs: that is what is tested.
    await new Promise(resolve => setTimeout(resolve, Math.max(0, at + 100 - Date.now())))
    const again = await build(t, keyed, { dataDir })
    const live = await until(async () => await anonymousRead(again, 'r'), WAIT_MS, 'published after the restart')
    t.equal(live._status, 'published')
    await nonePending(again, 'ended')
  })

  t.test('a schedule racing manual edits: every edit kept, one unpublish, a consistent end', async t => {
    const app = await setUp(t, keyed)
    await entry(t, app, 'x', 'published')
    const seen = events(app)
    const at = Date.now() + LEAD_MS
    await schedule(t, app, 'x', 'unpublish', at)
    let edits = 0
    // Edits until the schedule has run, and a few after: each a PATCH of the title only.
    while (seen.filter(e => e.event === 'content.updated' && e.status === 'draft').length === 0 || edits < 5) {
      const res = await app.inject({ method: 'PATCH', url: '/api/content/post/x', payload: { title: `edit ${++edits}` }, headers: auth(ADMIN_KEY) })
      t.equal(res.statusCode, 200, `edit ${edits}`)
      if (Date.now() > at + WAIT_MS) break
    }
    const end = await stored(app, 'x')
    t.same([end._status, end.title], ['draft', `edit ${edits}`], 'unpublished, with the last edit')
    const updates = seen.filter(e => e.event === 'content.updated')
    t.equal(updates.length, edits + 1, 'one event per edit and one for the unpublish')
    t.equal(updates.filter(e => e.status === 'draft' && e.previous_status === 'published').length, 1, 'one unpublish')
    const seqs = updates.map(e => e.seq)
    t.same(seqs, [...seqs].sort((a, b) => a - b), 'in order')
    t.equal(new Set(seqs).size, seqs.length, 'each its own change')
    await nonePending(app, 'ended')
  })

  t.test('_locale and _environment: the schedule acts on that entry only; the list by environment', async t => {
    const app = await setUp(t, { ...keyed, CMS_LOCALES: 'en,de', CMS_ENVIRONMENTS: 'production,staging' })
    await entry(t, app, 's', 'draft', '?_locale=de&_environment=staging')
    await entry(t, app, 's', 'draft')
    const made = await schedule(t, app, 's', 'publish', Date.now() + LEAD_MS, '?_locale=de&_environment=staging')
    t.match(made, { locale: 'de', environment: 'staging' })
    t.equal((await list(t, app, '?_environment=production')).total, 0)
    t.equal((await list(t, app, '?_environment=staging')).total, 1)
    t.equal((await list(t, app)).total, 1, 'every environment\'s without _environment')
    await until(async () => await anonymousRead(app, 's', '?_locale=de&_environment=staging'), WAIT_MS, 'published')
    t.equal(await anonymousRead(app, 's'), undefined, 'the other locale and environment\'s entry is still a draft')
    assertError(t, await app.inject({
      method: 'POST', url: '/api/content/post/s/schedule?_locale=en&_environment=staging', payload: { action: 'publish', at: new Date(Date.now() + 60_000).toISOString() }, headers: auth(ADMIN_KEY)
    }), 404, 'NOT_FOUND')
  })

  t.test('the list by entry: collection, slug and _locale filter before the page; 400 a slug alone or not a slug, 404 an unknown collection', async t => {
    const app = await setUp(t, { ...keyed, CMS_LOCALES: 'en,de', CMS_ENVIRONMENTS: 'production,staging' })
    await entry(t, app, 'p', 'draft')
    await entry(t, app, 'q', 'draft')
    await entry(t, app, 'p', 'draft', '?_locale=de')
    await entry(t, app, 'p', 'draft', '?_environment=staging')
    const hour = 3_600_000
    const base = Date.now() + hour
    // Entry p (en, production) has three, the others one each, interleaved in time.
    const q = await schedule(t, app, 'q', 'publish', base)
    const p1 = await schedule(t, app, 'p', 'publish', base + hour)
    const de = await schedule(t, app, 'p', 'publish', base + 2 * hour, '?_locale=de')
    const p2 = await schedule(t, app, 'p', 'unpublish', base + 3 * hour)
    const staged = await schedule(t, app, 'p', 'publish', base + 4 * hour, '?_environment=staging')
    const p3 = await schedule(t, app, 'p', 'publish', base + 5 * hour)
    const ids = (page: ScheduleList): string[] => page.items.map(s => s.id)

    const mine = await list(t, app, '?collection=post&slug=p&_locale=en&_environment=production')
    t.same([mine.total, mine.pages, ids(mine)], [3, 1, [p1.id, p2.id, p3.id]], 'the entry\'s only, soonest first')
    const first = await list(t, app, '?collection=post&slug=p&_locale=en&_environment=production&_per_page=2')
    t.same([first.total, first.pages, first.page, ids(first)], [3, 2, 1, [p1.id, p2.id]], 'its first page: the total counts the entry\'s')
    const second = await list(t, app, '?collection=post&slug=p&_locale=en&_environment=production&_per_page=2&_page=2')
    t.same([second.total, second.pages, second.page, ids(second)], [3, 2, 2, [p3.id]], 'its second page')
    t.same(ids(await list(t, app, '?collection=post&slug=q')), [q.id], 'the other entry\'s')
    t.same(ids(await list(t, app, '?collection=post&slug=p')), [p1.id, de.id, p2.id, staged.id, p3.id], 'without _locale and _environment: the slug in every locale and environment')
    t.same(ids(await list(t, app, '?collection=post&slug=p&_locale=de')), [de.id], '_locale: that locale\'s')
    t.same(ids(await list(t, app, '?collection=post&_environment=staging')), [staged.id], 'collection and _environment')
    t.equal((await list(t, app, '?collection=post')).total, 6, 'the collection\'s')
    t.same(await list(t, app, '?collection=post&slug=nobody'), { items: [], total: 0, page: 1, per_page: 20, pages: 0 }, 'an entry without schedules (or none): an empty list')
    t.equal((await list(t, app, '?status=failed&collection=post&slug=p')).total, 0, 'the status applies too')

    const get = async (query: string) => await app.inject({ url: `/api/schedules${query}`, headers: auth(ADMIN_KEY) })
    const alone = await get('?slug=p')
    assertError(t, alone, 400, 'BAD_REQUEST')
    t.match(alone.json().message, /'slug' needs 'collection'/)
    assertError(t, await get('?slug=p&_environment=staging'), 400, 'BAD_REQUEST')
    assertError(t, await get('?collection=post&slug=..%2Fx'), 400, 'BAD_REQUEST')
    assertError(t, await get('?collection=post&slug='), 400, 'BAD_REQUEST')
    assertError(t, await get('?collection='), 400, 'BAD_REQUEST')
    assertError(t, await get('?collection=nope'), 404, 'NOT_FOUND')
    assertError(t, await get('?collection=nope&slug=p'), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ url: '/api/schedules?collection=post&slug=p' }), 401, 'UNAUTHORIZED')
    t.equal((await app.inject({ url: '/api/schedules?collection=post&slug=p', headers: auth(VIEWER_KEY) })).json<ScheduleList>().total, 5, 'any key may read it')
  })

  t.test('errors: 400, 404, 422; with keys 401 and 403', async t => {
    const app = await setUp(t, keyed)
    await entry(t, app, 'e', 'draft')
    const post = async (url: string, payload: unknown, key: string | null = ADMIN_KEY) =>
      await app.inject({ method: 'POST', url, payload: payload as object, headers: key === null ? {} : auth(key) })
    const soon = new Date(Date.now() + 60_000).toISOString()
    const past = await post('/api/content/post/e/schedule', { action: 'publish', at: new Date(Date.now() - 1000).toISOString() })
    assertError(t, past, 422, 'VALIDATION_FAILED')
    t.same(past.json().errors, ['at: must not be in the past'])
    assertError(t, await post('/api/content/post/e/schedule', { action: 'publish', at: 'next monday' }), 422, 'VALIDATION_FAILED')
    assertError(t, await post('/api/content/post/e/schedule', { action: 'publish', at: '2031-02-30T00:00:00Z' }), 422, 'VALIDATION_FAILED')
    assertError(t, await post('/api/content/post/e/schedule', { action: 'archive', at: soon }), 400, 'BAD_REQUEST')
    assertError(t, await post('/api/content/post/e/schedule', { at: soon }), 400, 'BAD_REQUEST')
    assertError(t, await post('/api/content/post/e/schedule', { action: 'publish', at: soon, extra: 1 }), 400, 'BAD_REQUEST')
    assertError(t, await post('/api/content/nope/e/schedule', { action: 'publish', at: soon }), 404, 'NOT_FOUND')
    assertError(t, await post('/api/content/post/nobody/schedule', { action: 'publish', at: soon }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ url: '/api/schedules?status=done', headers: auth(ADMIN_KEY) }), 400, 'BAD_REQUEST')
    assertError(t, await app.inject({ url: '/api/schedules?_per_page=0', headers: auth(ADMIN_KEY) }), 400, 'BAD_REQUEST')

    const noKey = await post('/api/content/post/e/schedule', { action: 'publish', at: soon }, null)
    assertError(t, noKey, 401, 'UNAUTHORIZED')
    t.equal(noKey.headers['www-authenticate'], 'Bearer')
    assertError(t, await app.inject({ url: '/api/schedules' }), 401, 'UNAUTHORIZED')
    assertError(t, await app.inject({ url: '/api/schedules', headers: auth('not-a-key-0123456789abcdef') }), 401, 'UNAUTHORIZED')
    assertError(t, await app.inject({ method: 'DELETE', url: '/api/schedules/x' }), 401, 'UNAUTHORIZED')
    assertError(t, await post('/api/content/post/e/schedule', { action: 'publish', at: soon }, VIEWER_KEY), 403, 'FORBIDDEN')
    assertError(t, await app.inject({ method: 'DELETE', url: '/api/schedules/x', headers: auth(VIEWER_KEY) }), 403, 'FORBIDDEN')
    t.equal((await app.inject({ url: '/api/schedules', headers: auth(VIEWER_KEY) })).statusCode, 200, 'any key may read')
    t.equal((await post('/api/content/post/e/schedule', { action: 'publish', at: soon }, EDITOR_KEY)).statusCode, 201, 'an editor may schedule')
    t.equal((await list(t, app)).total, 1, 'only that one was stored')
  })

  t.test('keys off: every route is open', async t => {
    const app = await build(t, env)
    t.equal((await app.inject({ method: 'POST', url: '/api/schemas', payload: SCHEMA })).statusCode, 201)
    t.equal((await app.inject({ method: 'POST', url: '/api/content/post', payload: { _slug: 'o', title: 'o' } })).statusCode, 201)
    const made = await app.inject({ method: 'POST', url: '/api/content/post/o/schedule', payload: { action: 'unpublish', at: new Date(Date.now() + 60_000).toISOString() } })
    t.equal(made.statusCode, 201)
    t.equal((await app.inject({ url: '/api/schedules' })).json().total, 1)
    t.equal((await app.inject({ method: 'DELETE', url: `/api/schedules/${String(made.json().id)}` })).statusCode, 204)
  })
})
